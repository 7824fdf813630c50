"""Hand-provided files (xling.acquire.manual): the plan names the missing ones, once per dataset,
and takes those present as inputs of their import job."""

import io

from tests.dag import rule_inputs
from xling.acquire import manual
from xling.contracts import layout


def test_missing_files_are_named_once_per_dataset_and_present_ones_returned(tmp_path):
    stream = io.StringIO()
    report = manual.MissingFiles(stream)
    files = manual.ner_files("conll2003", "en", tmp_path)
    files["train"].parent.mkdir(parents=True)
    files["train"].write_text("-DOCSTART- O\n")
    present = report.present(files.values(), "NER dataset conll2003, en", "howto")
    assert present == [str(files["train"])]
    report.present(files.values(), "NER dataset conll2003, en", "howto")  # again: no new line
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert str(files["dev"]) in lines[0] and str(files["test"]) in lines[0]
    assert str(files["train"]) not in lines[0] and "howto" in lines[0]


def test_the_layouts_are_those_the_importers_read(tmp_path):
    assert manual.ner_files("wikiann", "fr", tmp_path)["dev"] == tmp_path / "wikiann/fr/dev"
    assert manual.ud_files("lexnorm", "en", ["test"], tmp_path) == [
        tmp_path / "lexnorm/en/test.conllu"
    ]
    assert manual.paraphrase_file("enp", tmp_path) == tmp_path / "parallel/enp.txt"


def test_the_paper_plan_names_missing_files_and_takes_present_ones_as_inputs(repo, tmp_path, capfd):
    hand = tmp_path / "manual"
    files = manual.ner_files("conll2003", "en", hand)
    files["train"].parent.mkdir(parents=True)
    files["train"].write_text("-DOCSTART- O\n")
    target = f"results/paper/data/{layout.ner('conll2003', 'en', 'train')}"
    inputs = rule_inputs(
        [repo / "config/config.yaml"], tmp_path / "work", "import_ner", targets=(target,),
        config={"data": {"manual_dir": str(hand)}},
    )  # fmt: skip
    assert inputs == [[str(files["train"])]]
    err = capfd.readouterr().err
    assert "Hand-provided files missing for NER dataset conll2003, en" in err
    assert str(files["test"]) in err and f"{files['train']}," not in err
