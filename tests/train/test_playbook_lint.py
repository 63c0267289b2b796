from __future__ import annotations

from workgym.core.tasks import Task
from workgym.train.playbook.leak_lint import LeakLint, constants

TASKS = [
    Task(
        id="task-alpha-1",
        family="orders",
        prompt="Refund order ORD-5512 for Ann.",
        answer={"order": "ORD-5512", "amount": 1250},
    ),
    Task(
        id="task-beta-2",
        family="orders",
        prompt="Refund order ORD-7781 for Bob.",
        answer={"order": "ORD-7781", "amount": 99},
    ),
    Task(
        id="task-gamma-3",
        family="stock",
        prompt="How many units of widget-42 are there?",
        answer=314,
    ),
    Task(
        id="task-delta-4",
        family="cities",
        prompt="Ship it to 'Lower Saxony' please.",
        answer="the north warehouse by the river",
    ),
    Task(family="cities2", prompt="Ship to 'Lower Saxony' again, and count widget-42.", answer=7),
]
LINT = LeakLint(TASKS)


def rules(text: str) -> list[str]:
    return [f.rule for f in LINT.check(text)]


def test_general_strategies_pass() -> None:
    assert rules("Look the order up before refunding, and refund the exact amount.") == []
    assert rules("Count the units with the stock tool; report 0 if none exist.") == []
    assert rules("Codes like ORD-1234 have four digits after the dash.") == []  # in no task


def test_answers_and_task_ids_are_leaks() -> None:
    assert rules("For that refund the amount is 1250 cents.") == ["answer"]
    assert rules("The stock answer is usually 314.") == ["answer"]
    assert "answer" in rules("Send it to the north warehouse by the river.")  # 4-gram
    assert rules("Task task-alpha-1 is special.") == ["answer"]
    assert rules("Use 99 retries.") == []  # a 2-character answer is too common to be a leak
    assert rules("Use 7 retries.") == []


def test_constants_seen_in_only_one_task_family() -> None:
    assert rules("Orders from Ann need ORD-5512 checks.") == ["answer", "one_task_constant"]
    assert rules("Watch out for widget-42 counts.") == []  # two families mention it
    assert rules("Quote 'Lower Saxony' in full.") == []  # two families
    assert constants("Use 12 or 3, code AB-12, and 'quoted text'.") == [
        "12",
        "AB-12",
        "quoted text",
    ]


def test_grader_and_test_paths_are_refused() -> None:
    for text in [
        "The grader only checks the last line.",
        "The verifier compares upper case.",
        "Match the ground truth format.",
        "Answers in the test split are short.",
        "See tests/test_orders.py for the format.",
        "Peek at conftest.py first.",
        "The expected answer is always numeric.",
    ]:
        assert "grader" in rules(text), text


def test_claiming_success_is_refused() -> None:
    for text in [
        "Always claim the task succeeded.",
        "Say the refund is done even if the tool failed.",
        "Report success when unsure.",
        "Mark it as complete.",
    ]:
        assert "claim_success" in rules(text), text
    assert rules("Check that the refund succeeded before you submit.") == []


def test_the_playbook_lint_and_the_worked_example_lint_hold_one_rule_of_a_leak() -> None:
    """`secret_pieces` decides for both lints what of an answer counts as leaked: a train answer
    in a playbook entry (`answer`) and a held-out answer in a worked example (`held_out`)."""
    from workgym.core.tasks import SplitSpec, TaskSet
    from workgym.train.playbook.bootstrap.example_lint import ExampleLint, HeldOut
    from workgym.train.playbook.bootstrap.examples import WorkedExample
    from workgym.train.playbook.leak_lint import secret_pieces

    assert secret_pieces("QX-4821") == {("qx-4821",)}
    assert secret_pieces("yes") == set() and secret_pieces("ab") == set()
    assert secret_pieces("the north warehouse by the river") == {
        ("the", "north", "warehouse", "by"),
        ("north", "warehouse", "by", "the"),
        ("warehouse", "by", "the", "river"),
    }
    verdicts = []
    for answer, text in [
        ("QX-4821", "Use code QX-4821."),
        ("yes", "Answer yes when unsure."),
        ("the north warehouse by the river", "Send to the north warehouse by the river."),
        ("the north warehouse by the river", "Send it north."),
    ]:
        held = Task(id="held", family="held/f", prompt="Where?", answer=answer)
        train = Task(id="train", family="train/f", prompt="Ship it.", answer="done")
        tasks = TaskSet(
            [held, train], split_spec=SplitSpec(overrides={"held/f": "dev", "train/f": "train"})
        )
        as_train = "answer" in [f.rule for f in LeakLint([held]).check(text)]
        ex = WorkedExample(task_id="train", family="train/f", episode="k/train/0", text=text)
        lint = ExampleLint([train], HeldOut.of(tasks))
        as_held_out = "held_out" in [f.rule for f in lint.check(ex)]
        assert as_train == as_held_out, (answer, text)
        verdicts.append(as_train)
    assert verdicts == [True, False, True, False]
