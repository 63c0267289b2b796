"""The viewer in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
open a generated run, filter, open an episode, mark a flag, save screenshots.

Set WORKGYM_VIEWER_SCREENSHOTS=DIR to keep the screenshots (they always go to the test's tmp dir).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_support import EARLY, Served

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)
expect = sync_api.expect
if not CHROMIUM.exists():
    pytest.skip(
        "no /usr/bin/chromium (apt-get install chromium chromium-driver)", allow_module_level=True
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("dialog", lambda d: errors.append(f"dialog opened: {d.message}"))
    pg.errors = errors
    yield pg
    context.close()
    assert errors == [], errors


def shot(page: Any, tmp_path: Path, name: str, full: bool = False) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=full)
    keep = os.environ.get("WORKGYM_VIEWER_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank one
    return path


def test_filter_open_episode_and_mark_a_flag(page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(served.url + "/")
    page.wait_for_selector("#runs")
    assert page.locator("#runs tbody tr").count() == 2
    shot(page, tmp_path, "01-runs")

    page.click("#runs >> text=runs/mixed")
    page.wait_for_selector("#episodes tbody tr")
    assert "1–50 of 120 episodes" in page.inner_text("#count")
    page.select_option("#filter-success", "false")
    expect(page.locator("#count")).to_contain_text("of 72")
    page.select_option("#filter-flag", EARLY)
    expect(page.locator("#count")).to_contain_text("of 0 ")
    page.select_option("#filter-success", "")
    expect(page.locator("#count")).to_contain_text("of 8 ")
    shot(page, tmp_path, "02-filtered", full=True)

    # a flagged success: open it, mark the flag a confirmed exploit
    page.locator("#episodes tbody tr").first.click()
    page.wait_for_selector("#transcript")
    assert "on a success" in page.inner_text("#flags")
    # the flag sits at the step that raised it: the turn that stated the price before the lookup
    assert "raised at message #2" in page.inner_text("#flags")
    assert f"audit flags: {EARLY} at step 1" in page.inner_text("#why")
    assert "before any lookup returned a result" in page.inner_text("#flags")  # the audit's why
    raised = page.locator("#m2.raised")
    expect(raised).to_contain_text("flag: " + EARLY)
    expect(raised).to_contain_text("checking anyway")
    page.click("#flags >> text=raised at message #2")
    page.wait_for_selector("#m2.focus")
    task_id = page.locator("h1 .mono").inner_text().split(" · ")[0]
    page.fill("#flags input.note", "answer with no lookup")
    page.click("#flags >> text=Confirm exploit")
    page.wait_for_selector("#flags >> text=confirmed exploit")
    shot(page, tmp_path, "03-flag-marked")
    lines = (served.root / "runs" / "mixed" / "reviews.jsonl").read_text().splitlines()
    mine = [json.loads(x) for x in lines if json.loads(x)["note"] == "answer with no lookup"]
    assert len(mine) == 1
    assert mine[0]["task_id"] == task_id and mine[0]["flag"] == EARLY
    assert mine[0]["decision"] == "exploit" and set(mine[0]) == {
        "task_id", "epoch", "flag", "decision", "note", "at",
    }  # fmt: skip
    page.reload()
    page.wait_for_selector("#flags >> text=confirmed exploit")  # the mark is shown from disk


def test_a_failed_episode_shows_its_cause(page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(served.url + "/#/run?run=runs/mixed&family=stock/t0")
    page.wait_for_selector("#episodes tbody tr")
    page.locator("#episodes tbody tr").first.click()
    page.wait_for_selector("#why")
    why = page.inner_text("#why")
    assert "answered" in why and "expected" in why
    assert "appears in the result of get_item at step 1" in why
    assert page.inner_text("#truth .expected") != page.inner_text("#truth .differs")
    shot(page, tmp_path, "04-failed-episode")
    page.click("#why >> text=go to #2")
    page.wait_for_selector("#m2.focus")


def test_agent_html_is_shown_as_text(page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(served.url + "/#/run?run=runs/mixed&flag=judge_directed")
    page.wait_for_selector("#episodes tbody tr")
    page.locator("#episodes tbody tr").first.click()
    page.wait_for_selector("#transcript")
    text = page.inner_text("#transcript")
    assert "<script>window.__pwned = 1</script>" in text
    assert '<img src=x onerror="window.__pwned = 2">' in text
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#transcript script, #transcript img, #transcript b").count() == 0
    shot(page, tmp_path, "05-script-as-text")


def test_compare_long_output_and_reports(page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(served.url + "/#/compare?a=runs/mixed&b=runs/oracle")
    page.wait_for_selector("#compare tbody tr")
    assert page.locator("#compare tbody tr").count() == 36  # tasks where the runs disagree
    shot(page, tmp_path, "06-compare")
    page.goto(served.url + "/#/run?run=runs/mixed&family=cheapest/t0")
    page.wait_for_selector("#episodes tbody tr")
    page.locator("#episodes tbody tr").first.click()
    page.wait_for_selector("#transcript button.fold")
    folded = page.locator("#transcript pre.folded").first.inner_text()
    page.locator("#transcript button.fold").first.click()
    assert len(page.locator("#transcript pre.text").nth(2).inner_text()) > len(folded)


def test_playbook_and_certificate_pages(page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(served.url + "/#/playbook?path=train/pb")
    page.wait_for_selector("#deltas tbody tr")
    deltas = page.inner_text("#deltas")
    assert "accepted" in deltas and "refused by curator" in deltas
    page.wait_for_selector("#diff pre.diff")
    assert "pb-002" in page.inner_text("#diff")
    assert "<script>alert(1)</script>" in page.inner_text("#entries")  # shown as text
    assert page.evaluate("document.querySelectorAll('#entries script').length") == 0
    shot(page, tmp_path, "07-playbook", full=True)

    page.goto(served.url + "/#/certificate?path=certs/toy")
    page.wait_for_selector("#cert-verdict")
    assert "FAIL" in page.inner_text("#cert-verdict")
    frame = page.frame_locator("#cert-frame")
    expect(frame.locator("h1")).to_contain_text("non-regression not shown")
    assert "SCRIPT RAN" not in frame.locator("body").inner_text()
    assert page.evaluate("window.__certScript") is None
    page.click("text=compare the two runs task by task")
    page.wait_for_selector("#compare tbody tr")
    page.go_back()
    page.wait_for_selector("#cert-frame")
    shot(page, tmp_path, "08-certificate", full=True)
