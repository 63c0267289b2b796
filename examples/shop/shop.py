# examples/shop/shop.py
import json
from pathlib import Path

import workgym as wg

HERE = Path(__file__).parent  # catalog.json and tasks.jsonl live next to this file


def load_catalog() -> dict:
    return json.loads((HERE / "catalog.json").read_text())


@wg.tool
def list_items(ctx: wg.Ctx, category: str) -> list[str]:
    """List the item names of one category (tea, coffee or spice).

    Args:
        category: The category name.
    """
    return sorted(name for name, item in ctx.state.items() if item["category"] == category)


@wg.tool
def get_item(ctx: wg.Ctx, name: str) -> dict:
    """Look up one item: its category, unit price in cents and units in stock.

    Args:
        name: The item name.
    """
    item = ctx.state.get(name)
    if item is None:
        raise wg.ToolError(f"no item {name!r}; use list_items(category) to see names")
    return item


@wg.tool(final=True)
def submit_answer(answer: int) -> str:
    """Submit the final answer (an integer). This ends the task."""
    return "answer recorded"


@wg.register
class Shop(wg.Environment):
    id = "acme/shop"
    version = "1"
    tools = [list_items, get_item, submit_answer]
    limits = wg.Limits(max_turns=12)

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet.from_jsonl("tasks.jsonl")  # relative to this file: examples/shop/

    def state(self, task: wg.Task) -> dict:  # fresh per episode
        return load_catalog()

    def verify(self, task: wg.Task, episode: wg.Episode) -> wg.Verdict:
        return wg.Verdict.correct() if episode.answer == task.answer else wg.Verdict.wrong()


if __name__ == "__main__":  # python examples/shop/shop.py: the oracle test double plays it
    run = wg.eval(Shop(), model="scripted/oracle", split="all", out="runs/shop-oracle")
    print(run.summary())
