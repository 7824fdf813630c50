"""POS tagging (Muller et al. 2021): UPOS reading, first-subword labels, accuracy, end to end.

The end-to-end data, tokenizer and models come from tests/finetune_world.py.
"""

import json

import pytest
import torch
from torch import nn

from tests.finetune_world import build_world, make_model, task_data
from xling.base.errors import DataFormatError
from xling.contracts import layout
from xling.contracts.conllu import UPOS_TAGS, read_conllu
from xling.finetune import TASK_HP_KEYS, FinetuneJob, FinetuneSettings, run_finetune
from xling.finetune.heads import WordTagger
from xling.finetune.metrics import tag_accuracy
from xling.finetune.tasks import TASK_NAMES, PosTask, make_task
from xling.finetune.tasks.pos import NO_PREDICTION
from xling.papers.wu2020 import WU_TASKS

torch.set_num_threads(1)

# "The abc runs ." where "abc" has three subwords: input </s> 5 | 10 11 12 | 6 | 7 </s>.
PIECES = {"The": [5], "abc": [10, 11, 12], "runs": [6], ".": [7]}
SENTENCE = """# sent_id = 1
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tabc\tabc\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\truns\trun\tVERB\t_\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

"""
GOLD = ["DET", "NOUN", "VERB", "PUNCT"]


class PiecesTokenizer:
    pad_id, unk_id, eos_id = 0, 1, 2

    def encode_words(self, words, lang):
        return [PIECES[word] for word in words]


class FixedStates(nn.Module):
    """A stand-in for TaskModel: encoder states set by hand, a tagger that reads tag k off
    dimension k (identity weights), so the state at a position decides its tag."""

    def __init__(self, states):
        super().__init__()
        self.states = states
        self.head = WordTagger(len(UPOS_TAGS), len(UPOS_TAGS), 0.0)
        with torch.no_grad():
            self.head.output.weight.copy_(torch.eye(len(UPOS_TAGS)))
            self.head.output.bias.zero_()

    def encode(self, batch, lang):
        return self.states


def one_hot_states(length, tags_at):
    states = torch.zeros(1, length, len(UPOS_TAGS))
    for position, tag in tags_at.items():
        states[0, position, UPOS_TAGS.index(tag)] = 5.0
    return states.requires_grad_(True)


@pytest.fixture
def handmade(tmp_path):
    path = tmp_path / "one.conllu"
    path.write_text(SENTENCE, encoding="utf-8")
    task = PosTask(PiecesTokenizer())
    examples = task.read(path, "en", "test")
    return task, examples


def test_only_the_first_subword_of_a_word_carries_a_label(handmade):
    task, examples = handmade
    (item,) = task.encode(examples, "en", max_length=32)
    assert item["input_ids"] == [2, 5, 10, 11, 12, 6, 7, 2]
    assert item["first_subword"] == [1, 2, 5, 6]  # 11 and 12 (positions 3, 4) start no word
    assert item["labels"] == [UPOS_TAGS.index(tag) for tag in GOLD]  # one label per word
    batch = task.collate([item])
    first = dict(zip([1, 2, 5, 6], GOLD, strict=True))

    # Right tags at the first subwords: everything else may say anything.
    right = one_hot_states(8, first)
    model = FixedStates(right)
    assert task.score(examples, task.predict(model, batch, "en")) == 1.0
    loss = task.loss(model, batch, "en")
    loss.backward()
    assert right.grad[0, [0, 3, 4, 7]].abs().sum() == 0  # no loss through non-first subwords

    noisy = one_hot_states(8, {**first, 3: "PROPN", 4: "X", 0: "SYM", 7: "INTJ"})
    with torch.no_grad():
        noisy[0, [3, 4]] *= 100  # confident, wrong predictions at the other subwords of "abc"
    model = FixedStates(noisy)
    assert task.predict(model, batch, "en") == [GOLD]
    assert task.score(examples, task.predict(model, batch, "en")) == 1.0
    assert torch.equal(task.loss(model, batch, "en"), loss.detach())

    # A wrong tag at the first subword of "abc" is what makes the word wrong.
    model = FixedStates(one_hot_states(8, {**first, 2: "VERB", 3: "NOUN", 4: "NOUN"}))
    assert task.predict(model, batch, "en") == [["DET", "VERB", "VERB", "PUNCT"]]
    assert task.score(examples, task.predict(model, batch, "en")) == 0.75


def test_words_cut_by_the_length_limit_count_as_wrong(handmade):
    task, examples = handmade
    (item,) = task.encode(examples, "en", max_length=4)  # </s> The abc(first subword) </s>
    assert item["first_subword"] == [1, 2] and len(item["labels"]) == 2
    batch = task.collate([item])
    model = FixedStates(one_hot_states(4, {1: "DET", 2: "NOUN"}))
    predicted = task.predict(model, batch, "en")
    assert predicted == [["DET", "NOUN", NO_PREDICTION, NO_PREDICTION]]
    assert task.score(examples, predicted) == 0.5


def test_tag_accuracy_is_over_words():
    assert tag_accuracy([["A", "B"], ["C"]], [["A", "X"], ["C"]]) == pytest.approx(2 / 3)
    assert tag_accuracy([], []) == 0.0
    with pytest.raises(ValueError, match="sentence 0"):
        tag_accuracy([["A"]], [["A", "B"]])
    with pytest.raises(ValueError, match="sentences"):
        tag_accuracy([["A"]], [])


@pytest.mark.parametrize("bad", ["NOUNS", "_", "noun"])
def test_unknown_upos_is_rejected_with_file_and_line(tmp_path, bad):
    path = tmp_path / "bad.conllu"
    path.write_text(SENTENCE.replace("\tVERB\t", f"\t{bad}\t"), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"bad\.conllu:4: UPOS '{bad}' is not one of the 17"):
        PosTask(PiecesTokenizer()).read(path, "en", "train")
    assert read_conllu(path)[0].upos[2] == bad  # parsing does not need UPOS: it reads the file


def test_pos_is_registered_but_not_a_table1_task(tmp_path):
    assert "pos" in TASK_NAMES and "pos" in layout.TASKS and "pos" not in WU_TASKS
    assert TASK_HP_KEYS["pos"] == ("batch_size", "lr")
    assert layout.task_files("pos", "toy_wiki", "fr", ["test"]) == {
        "test": "ud/toy_wiki/fr/test.conllu"
    }
    section = {"epochs": 2, "max_length": 64, "best_k": 1, "grid": {}, "datasets": {}}
    settings = FinetuneSettings.from_config("pos", section, seed=0)
    task = make_task("pos", PiecesTokenizer(), settings)
    assert isinstance(task, PosTask)
    assert (task.metric, task.lr_schedule, task.labels) == ("upos", "warmup_linear", [*UPOS_TAGS])
    assert len(set(UPOS_TAGS)) == 17


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("world"))


def test_pos_end_to_end(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    out = tmp_path / "out"
    metrics = run_finetune(
        FinetuneJob(
            "pos",
            model_dir,
            task_data(root, "pos"),
            {"batch_size": 8, "lr": 5e-3},
            out,
            tmp_path / "work",
            FinetuneSettings(epochs=2, seed=1, max_length=48),
            pair="en-fr",
        )
    )
    assert json.loads((out / "metrics.json").read_text()) == metrics
    assert (metrics["task"], metrics["metric"], metrics["hp_id"]) == ("pos", "upos", "bs8_lr0.005")
    scores = [*metrics["dev"].values(), *metrics["test"].values()]
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert metrics["dev"]["en"] > 0.8  # five tags, each mostly fixed by the word

    gold_path = root / "ud" / "fr" / "test.conllu"
    predicted = read_conllu(out / "predictions.fr.conllu", require_upos=True)  # valid CoNLL-U
    gold = read_conllu(gold_path)
    assert [s.words for s in predicted] == [s.words for s in gold]
    accuracy = tag_accuracy([s.upos for s in gold], [s.upos for s in predicted])
    assert accuracy == pytest.approx(metrics["test"]["fr"])  # the file holds what was scored
    gold_lines = gold_path.read_text(encoding="utf-8").splitlines()
    predicted_lines = (out / "predictions.fr.conllu").read_text(encoding="utf-8").splitlines()
    assert len(predicted_lines) == len(gold_lines)
    for gold_line, line in zip(gold_lines, predicted_lines, strict=True):
        if gold_line.startswith("#") or not gold_line:
            assert line == gold_line
        else:  # only the UPOS column (the 4th) is the model's
            columns, gold_columns = line.split("\t"), gold_line.split("\t")
            assert columns[:3] + columns[4:] == gold_columns[:3] + gold_columns[4:]
            assert columns[3] in UPOS_TAGS
