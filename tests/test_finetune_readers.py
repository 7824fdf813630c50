"""Task file readers and writers: good files read right, bad lines stop with file and line."""

import pytest

from xling.finetune.readers import (
    DataFormatError,
    read_conllu,
    read_ner,
    read_xnli,
    read_xnli_train,
)
from xling.finetune.writers import write_conllu, write_ner, write_xnli

CONLLU = (
    "# sent_id = 1\n"
    "# text = Les chats dorment.\n"
    "1\tLes\tle\tDET\t_\t_\t2\tdet\t_\t_\n"
    "2\tchats\tchat\tNOUN\t_\t_\t3\tnsubj:pass\t_\t_\n"
    "3-4\tdorment.\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\tdorment\tdormir\tVERB\t_\t_\t0\troot\t0:root\t_\n"
    "3.1\tz\tz\tX\t_\t_\t_\t_\t3:dep\t_\n"
    "4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_\n"
    "\n"
    "1\tOui\toui\tINTJ\t_\t_\t0\troot\t_\t_\n"
    "\n"
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_ner_reads_sentences_and_lines(tmp_path):
    text = "en:John\tB-PER\nen:Smith\tI-PER\nen:runs\tO\n\n\nen:Paris:Nord\tB-LOC\n"
    sentences = read_ner(write(tmp_path, "a.txt", text), "en")
    assert [s.words for s in sentences] == [["John", "Smith", "runs"], ["Paris:Nord"]]
    assert [s.tags for s in sentences] == [["B-PER", "I-PER", "O"], ["B-LOC"]]
    assert [s.line for s in sentences] == [1, 6]
    assert sentences[1].where() == f"{tmp_path / 'a.txt'}:6"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("en:a\tO\nen:b O\n", 2, "2 tab-separated columns"),
        ("en:a\tO\n\nfr:b\tO\n", 3, "language prefix"),
        ("en:a\tO\nen:\tO\n", 2, "empty word"),
        ("en:a\tO\nen:b\tPER\n", 2, "not a BIO tag"),
        ("en:a\tO\nen:b\tB-PER\tO\tO\n", 2, "columns"),
    ],
)
def test_ner_bad_lines_name_file_and_line(tmp_path, text, line, reason):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(DataFormatError, match=reason) as error:
        read_ner(path, "en")
    assert error.value.line == line
    assert str(error.value).startswith(f"{path}:{line}:")


def test_ner_empty_and_non_utf8_files(tmp_path):
    with pytest.raises(DataFormatError, match="no sentence"):
        read_ner(write(tmp_path, "empty.txt", "\n\n"), "en")
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"en:a\tO\nen:caf\xe9\tO\n")
    with pytest.raises(DataFormatError, match="UTF-8") as error:
        read_ner(path, "en")
    assert error.value.line == 2


def test_ner_writer_round_trips_with_a_prediction_column(tmp_path):
    sentences = read_ner(write(tmp_path, "a.txt", "fr:Jean\tB-PER\nfr:dort\tO\n\n"), "fr")
    out = tmp_path / "pred.txt"
    write_ner(out, "fr", sentences, [["B-PER", "B-LOC"]])
    assert out.read_text() == "fr:Jean\tB-PER\tB-PER\nfr:dort\tO\tB-LOC\n\n"
    assert read_ner(out, "fr")[0].tags == ["B-PER", "O"]


def test_conllu_keeps_syntactic_words_only(tmp_path):
    first, second = read_conllu(write(tmp_path, "a.conllu", CONLLU))
    assert first.words == ["Les", "chats", "dorment", "."]
    assert first.heads == [2, 3, 0, 3]
    assert first.deprels == ["det", "nsubj", "root", "punct"]  # subtype stripped
    assert first.upos == ["DET", "NOUN", "VERB", "PUNCT"]
    assert first.line == 1 and second.line == 10
    assert first.where(3) == f"{tmp_path / 'a.conllu'}:8"


def test_conllu_writer_replaces_head_and_deprel_only(tmp_path):
    path = write(tmp_path, "a.conllu", CONLLU)
    sentences = read_conllu(path)
    out = tmp_path / "pred.conllu"
    write_conllu(out, sentences, [[3, 3, 0, 1], [0]], [["det", "obj", "root", "dep"], ["root"]])
    lines = out.read_text().splitlines()
    assert lines[:2] == ["# sent_id = 1", "# text = Les chats dorment."]
    assert lines[3] == "2\tchats\tchat\tNOUN\t_\t_\t3\tobj\t_\t_"
    assert lines[4] == "3-4\tdorment.\t_\t_\t_\t_\t_\t_\t_\t_"  # ranges copied as they are
    assert lines[6] == "3.1\tz\tz\tX\t_\t_\t_\t_\t3:dep\t_"
    predicted = read_conllu(out)
    assert predicted[0].heads == [3, 3, 0, 1]
    assert predicted[0].deprels == ["det", "obj", "root", "dep"]


@pytest.mark.parametrize(
    ("old", "new", "line", "reason"),
    [
        ("2\tchats\tchat\tNOUN\t_\t_\t3\tnsubj:pass\t_\t_", "2\tchats\tchat", 4, "10 tab"),
        ("\t3\tnsubj:pass", "\tx\tnsubj:pass", 4, "does not parse"),
        ("\t3\tnsubj:pass", "\t9\tnsubj:pass", 4, "outside 0..4"),
        ("\t3\tnsubj:pass", "\t3\tsubject", 4, "universal relation"),
        ("2\tchats", "5\tchats", 4, "word ID 5"),
    ],
)
def test_conllu_bad_lines_name_file_and_line(tmp_path, old, new, line, reason):
    path = write(tmp_path, "bad.conllu", CONLLU.replace(old, new, 1))
    with pytest.raises(DataFormatError, match=reason) as error:
        read_conllu(path)
    assert error.value.line == line
    assert str(error.value).startswith(f"{path}:{line}:")


XNLI_HEADER = "language\tgold_label\tsentence1\tsentence2\tpromptID\tpairID\n"


def test_xnli_filters_by_language(tmp_path):
    text = XNLI_HEADER + (
        'en\tneutral\tA "quoted" man.\tA man.\t1\t11\n'
        "fr\tcontradiction\tUn homme.\tPersonne.\t1\t12\n"
        "en\tentailment\tTwo dogs.\tDogs.\t2\t13\n"
    )
    path = write(tmp_path, "xnli.dev.tsv", text)
    pairs = read_xnli(path, "en")
    assert [(p.premise, p.label, p.pair_id, p.line) for p in pairs] == [
        ('A "quoted" man.', "neutral", "11", 2),
        ("Two dogs.", "entailment", "13", 4),
    ]
    assert read_xnli(path, "fr")[0].label == "contradiction"
    with pytest.raises(DataFormatError, match="no row with language 'de'"):
        read_xnli(path, "de")


def test_xnli_bad_rows(tmp_path):
    path = write(tmp_path, "x.tsv", XNLI_HEADER + "en\tmaybe\ta\tb\t1\t2\n")
    with pytest.raises(DataFormatError, match="'maybe' is not an NLI label") as error:
        read_xnli(path, "en")
    assert error.value.line == 2
    path = write(tmp_path, "y.tsv", XNLI_HEADER + "en\tneutral\ta\tb\t1\t2\nen\tneutral\ta\n")
    with pytest.raises(DataFormatError, match="3 tab-separated fields") as error:
        read_xnli(path, "en")
    assert error.value.line == 3
    with pytest.raises(DataFormatError, match="lacks column"):
        read_xnli(write(tmp_path, "z.tsv", "language\tlabel\n"), "en")


def test_xnli_mt_train_maps_contradictory(tmp_path):
    text = "premise\thypo\tlabel\nA man .\tNobody .\tcontradictory\nA.\tB.\tentailment\n"
    pairs = read_xnli_train(write(tmp_path, "multinli.train.en.tsv", text))
    assert [p.label for p in pairs] == ["contradiction", "entailment"]
    assert pairs[0].hypothesis == "Nobody ."


def test_xnli_writer(tmp_path):
    path = write(tmp_path, "x.tsv", XNLI_HEADER + "en\tneutral\ta\tb\t1\t7\n")
    out = tmp_path / "pred.tsv"
    write_xnli(out, read_xnli(path, "en"), ["entailment"])
    assert out.read_text() == "pairID\tgold_label\tprediction\n7\tneutral\tentailment\n"
