"""The certificate: baseline vs candidate on held-out tasks and regression suites
(docs/certificate.md).

The statistics it rests on live in `workgym.stats`; the regression suites are environments
(`workgym.envs.suites`).
"""
