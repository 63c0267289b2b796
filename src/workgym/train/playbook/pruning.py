"""Step 8: credit entries from the rollouts, retire harmful ones, and keep within the budget.

Credit follows the group advantage of the episodes that cited an entry: helpful when the episode
beat its group, harmful when it fell below, neutral when the group was flat. All-pass groups credit
only the entries they used (as helpful); all-fail groups credit nothing but neutral uses. Over the
token budget, near-duplicates are merged first, then the least useful entries are retired.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from workgym.train.playbook.deltas import Delta, DeltaOp, apply_deltas
from workgym.train.playbook.entries import Counters, Entry, EntryStatus
from workgym.train.playbook.groups import Group
from workgym.train.playbook.playbook import Playbook
from workgym.train.playbook.text import similarity


def credit(
    groups: Sequence[Group], cited: Mapping[str, Sequence[str]], live: set[str]
) -> dict[str, Counters]:
    """Counter increments per entry id; `cited` maps an episode ref to the ids it cited."""
    out: dict[str, Counters] = defaultdict(Counters)
    for group in groups:
        kind = group.kind
        for ref, adv in zip(group.refs, group.advantages, strict=True):
            for ident in sorted(set(cited.get(ref, ())) & live):
                if kind == "contrastive":
                    field = "helpful" if adv > 0 else "harmful" if adv < 0 else "neutral"
                elif kind == "all-pass":
                    field = "helpful"
                else:
                    field = "neutral"
                out[ident] = out[ident] + Counters(cited=1, **{field: 1})
    return dict(sorted(out.items()))


def prune(playbook: Playbook, *, margin: int, min_uses: int) -> tuple[Playbook, list[str]]:
    """Retire live entries that were harmful clearly more often than helpful."""
    doomed = [
        e.id
        for e in playbook.live
        if e.status == EntryStatus.active
        and e.counters.uses >= min_uses
        and e.counters.harmful - e.counters.helpful >= margin
    ]
    notes = [
        f"pruned {i}: harmful {playbook.get(i).counters.harmful} vs helpful "
        f"{playbook.get(i).counters.helpful}"
        for i in doomed
    ]
    new = playbook
    for ident, note in zip(doomed, notes, strict=True):
        new = new.retire([ident], note)
    return new, notes


def _usefulness_key(e: Entry) -> tuple[int, int, int]:
    return (e.counters.usefulness, e.counters.cited, int(e.id.removeprefix("pb-")))


def compact(playbook: Playbook, *, merge_similarity: float) -> tuple[Playbook, list[str]]:
    """Bring an over-budget playbook back under its budget: merge the most similar pair of
    entries while one is similar enough, then retire the least useful entries."""
    notes: list[str] = []
    pb = playbook
    while pb.over_budget:
        live = list(pb.live)
        pairs = [
            (similarity(a.text, b.text), a, b) for i, a in enumerate(live) for b in live[i + 1 :]
        ]
        pairs = [p for p in pairs if p[0] >= merge_similarity]
        if pairs:
            score, a, b = max(pairs, key=lambda p: p[0])
            keep, drop = (a, b) if _usefulness_key(a) >= _usefulness_key(b) else (b, a)
            merge = Delta(
                id="compact", op=DeltaOp.MERGE, target_ids=(keep.id, drop.id), text=keep.text
            )
            pb = apply_deltas(pb, [merge], status=EntryStatus.active).playbook
            notes.append(f"merged {drop.id} into {keep.id} (similarity {score:.2f})")
            continue
        if not live:
            break
        worst = min(live, key=_usefulness_key)
        pb = pb.retire([worst.id], "retired to fit the token budget")
        notes.append(f"retired {worst.id} (least useful) to fit the token budget")
    return pb, notes
