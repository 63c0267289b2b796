"""The README and the docs' quick starts run as written, on a copy of a clean checkout.

Every fenced block is labelled: `python` and `shell` blocks run; `text`, `json` and `toml` blocks
are shown, not run.
A block that needs a model endpoint or a long run says so on the line above it with
`<!-- not-run: why -->` (docs/decisions/0040-first-hour.md). The shell blocks of one document
run in one bash session, in order and with `set -e`, so `source .venv/bin/activate` carries to
the next block as it does in a terminal (the docs start activated: they carry on from the
README); each python block is its own script. A python block that
starts with `# PATH` is a file of the checkout shown in full: it must match that file byte for
byte, and it runs from there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ["README.md", "docs/warehouse.md", "docs/playbook.md"]
RUN = {"python", "shell"}
SHOWN = {"text", "json", "toml"}
FENCE = re.compile(r"^```(\S*)\s*$")
MARK = re.compile(r"^<!-- not-run: (.+?) -->$")
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Block:
    document: str
    line: int
    lang: str
    body: str
    not_run: str | None


def blocks(document: str) -> list[Block]:
    found: list[Block] = []
    lines = (ROOT / document).read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        mark = MARK.match(lines[i - 1]) if i else None
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        body = "\n".join(lines[i + 1 : end]) + "\n"
        found.append(Block(document, i + 1, m.group(1), body, mark.group(1) if mark else None))
        i = end + 1
    return found


ALL = [b for d in DOCUMENTS for b in blocks(d)]


@pytest.mark.parametrize("block", ALL, ids=lambda b: f"{b.document}:{b.line}")
def test_every_block_is_labelled(block: Block) -> None:
    assert block.lang in RUN | SHOWN, (
        f"{block.document}:{block.line}: label the block ```python, ```shell or ```text"
    )
    if block.not_run is not None:
        assert block.lang in RUN and len(block.not_run) > 10, "say why it does not run"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files a clean clone has that the blocks read, plus `.venv` as the test's own."""
    root = tmp_path_factory.mktemp("checkout")
    for name in ("examples", "docs"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("runs"))
    shutil.copy(ROOT / "README.md", root / "README.md")
    venv = Path(sys.prefix)
    if (venv / "bin" / "activate").exists():
        (root / ".venv").symlink_to(venv)
    else:  # not a virtualenv (a system Python): an activate that puts this Python first
        (root / ".venv" / "bin").mkdir(parents=True)
        (root / ".venv" / "bin" / "activate").write_text(
            f'export PATH="{Path(sys.executable).parent}:$PATH"\n'
        )
    return root


def _env() -> dict[str, str]:
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1")
    env.pop("OPENAI_BASE_URL", None)
    return env


def _runs(document: str) -> list[Block]:
    return [b for b in ALL if b.document == document and b.lang in RUN and b.not_run is None]


def _run(argv: list[str], cwd: Path, where: str, timeout: int) -> None:
    """Run as a reader would: exit 0 and no traceback anywhere in the output."""
    result = subprocess.run(
        argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{where} failed ({result.returncode}):\n{output[-4000:]}"
    assert TRACEBACK not in output, f"{where} printed a traceback:\n{output[-4000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("document", DOCUMENTS)
def test_shell_blocks_run_as_written(document: str, checkout: Path) -> None:
    shell = [b for b in _runs(document) if b.lang == "shell"]
    if not shell:
        pytest.skip(f"{document} has no runnable shell block")
    # The docs carry on from the README, whose readers have activated the virtualenv.
    activate = "" if document == "README.md" else "source .venv/bin/activate\n"
    script = (
        "set -euo pipefail\n"
        + activate
        + "".join(f"echo '## {b.document}:{b.line}'\n{b.body}" for b in shell)
    )
    _run(["bash", "-c", script], checkout, f"shell blocks of {document}", timeout=600)


PY_BLOCKS = [b for d in DOCUMENTS for b in _runs(d) if b.lang == "python"]


@pytest.mark.parametrize("block", PY_BLOCKS, ids=lambda b: f"{b.document}:{b.line}")
def test_python_blocks_run_as_written(block: Block, checkout: Path) -> None:
    first = block.body.splitlines()[0]
    if first.startswith("# ") and "/" in first and first.endswith(".py"):
        shown = first[2:].strip()
        assert (ROOT / shown).read_text() == block.body, (
            f"{block.document}:{block.line} shows {shown}, but they differ: copy one to the other"
        )
        script = checkout / shown
    else:
        script = checkout / f"block_{Path(block.document).stem}_{block.line}.py"
        script.write_text(block.body)
    _run([sys.executable, str(script)], checkout, f"{block.document}:{block.line}", timeout=300)
