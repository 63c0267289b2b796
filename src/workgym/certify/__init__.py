"""The certificate: baseline vs candidate on held-out tasks and regression suites (CERTIFICATE.md).

The statistics it rests on live in `workgym.stats`; the regression suites are environments
(`workgym.envs.suites`).
"""
