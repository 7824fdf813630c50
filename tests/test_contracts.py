"""The data contracts (xling.contracts): good files read right, bad lines stop with file and line,
writers write what the readers read back; the R/data layout."""

import pytest

from xling.base.errors import DataFormatError, InputFileError
from xling.contracts import layout
from xling.contracts.alignment import format_alignment, read_alignments
from xling.contracts.conllu import (
    ConlluWord,
    format_conllu_sentence,
    read_conllu,
    surface_tokens,
    write_conllu_predictions,
)
from xling.contracts.muse import format_muse_entry, read_muse
from xling.contracts.ner import format_ner_sentence, read_ner, write_ner, write_ner_predictions
from xling.contracts.xnli import (
    XNLI_COLUMNS,
    XNLI_MT_COLUMNS,
    format_header,
    format_xnli_mt_row,
    format_xnli_row,
    read_xnli,
    read_xnli_train,
    write_xnli_predictions,
)

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
    with pytest.raises(InputFileError, match="UTF-8") as error:
        read_ner(path, "en")
    assert error.value.line == 2


def test_ner_writer_round_trips_with_a_prediction_column(tmp_path):
    sentences = read_ner(write(tmp_path, "a.txt", "fr:Jean\tB-PER\nfr:dort\tO\n\n"), "fr")
    out = tmp_path / "pred.txt"
    write_ner_predictions(out, "fr", sentences, [["B-PER", "B-LOC"]])
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


def test_surface_tokens_keep_multiword_tokens_as_written(tmp_path):
    rows = [
        "# text = Au chat du voisin.",
        "1-2\tAu\t_\t_\t_\t_\t_\t_\t_\t_",
        "1\tà\tà\tADP\t_\t_\t3\tcase\t_\t_",
        "2\tle\tle\tDET\t_\t_\t3\tdet\t_\t_",
        "3\tchat\tchat\tNOUN\t_\t_\t0\troot\t_\t_",
        "3.1\tvu\t_\t_\t_\t_\t_\t_\t3:dep\t_",
        "4-5\tdu\t_\t_\t_\t_\t_\t_\t_\t_",
        "4\tde\tde\tADP\t_\t_\t6\tcase\t_\t_",
        "5\tle\tle\tDET\t_\t_\t6\tdet\t_\t_",
        "6\tvoisin\tvoisin\tNOUN\t_\t_\t3\tnmod\t_\tSpaceAfter=No",
        "7\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_",
    ]
    (sentence,) = read_conllu(write(tmp_path, "pud.conllu", "\n".join(rows) + "\n\n"))
    assert sentence.words == ["à", "le", "chat", "de", "le", "voisin", "."]
    assert surface_tokens(sentence) == ["Au", "chat", "du", "voisin", "."]


def test_conllu_writer_replaces_head_and_deprel_only(tmp_path):
    path = write(tmp_path, "a.conllu", CONLLU)
    sentences = read_conllu(path)
    out = tmp_path / "pred.conllu"
    write_conllu_predictions(
        out, sentences, [[3, 3, 0, 1], [0]], [["det", "obj", "root", "dep"], ["root"]]
    )
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
        ("\t3\tnsubj:pass", "\t-1\tnsubj:pass", 4, "outside 0..4"),
        ("\t3\tnsubj:pass", "\t2\tnsubj:pass", 4, "word 2 is its own head"),
        ("\t3\tnsubj:pass", "\t1\tnsubj:pass", 3, "words 1 -> 2 -> 1 form a cycle"),
        ("\t0\troot\t0:root", "\t4\troot\t0:root", 3, "without a root"),
        ("\t3\tpunct", "\t0\tpunct", 8, "second root: words 3, 4 all have HEAD 0"),
        ("\t3\tnsubj:pass", "\t3\tsubject", 4, "universal relation"),
        ("2\tchats", "5\tchats", 4, "word ID 5"),
        ("3-4\tdorment.", "3-5\tdorment.", 5, "range ends at word 5, the sentence has 4"),
        ("3-4\tdorment.", "2-3\tdorment.", 5, "multi-word range 2-3 after word 2"),
        ("3-4\tdorment.", "3-3\tdorment.", 5, "multi-word range 3-3 after word 2"),
    ],
)
def test_conllu_bad_lines_name_file_and_line(tmp_path, old, new, line, reason):
    path = write(tmp_path, "bad.conllu", CONLLU.replace(old, new, 1))
    assert path.read_text() != CONLLU
    with pytest.raises(DataFormatError, match=reason) as error:
        read_conllu(path)
    assert error.value.line == line
    assert str(error.value).startswith(f"{path}:{line}:")


def test_conllu_cycle_away_from_the_root_names_its_first_word_and_the_fix(tmp_path):
    # 1 is the root and 3 hangs from it; 2 -> 5 -> 4 -> 2 never reaches it.
    heads = {1: 0, 2: 5, 3: 1, 4: 2, 5: 4}
    lines = [
        f"{i}\tw{i}\tw\tX\t_\t_\t{h}\t{'root' if h == 0 else 'dep'}\t_\t_" for i, h in heads.items()
    ]
    path = write(tmp_path, "cycle.conllu", CONLLU + "# sent_id = 3\n" + "\n".join(lines) + "\n\n")
    with pytest.raises(DataFormatError) as error:
        read_conllu(path)
    assert str(error.value) == (
        f"{path}:14: words 2 -> 5 -> 4 -> 2 form a cycle: following HEAD from them never reaches "
        "the root (attach one word of the cycle to a word outside it, or to the root)"
    )


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
    write_xnli_predictions(out, read_xnli(path, "en"), ["entailment"])
    assert out.read_text() == "pairID\tgold_label\tprediction\n7\tneutral\tentailment\n"


def test_data_format_error_is_an_input_file_error_with_the_file_line_message():
    error = DataFormatError("data/x.txt", 7, "bad tag", "use O")
    assert isinstance(error, InputFileError)
    assert str(error) == "data/x.txt:7: bad tag (use O)"
    assert (error.path, error.line, error.reason, error.fix) == (
        "data/x.txt",
        7,
        "bad tag",
        "use O",
    )
    assert str(DataFormatError("x.txt", 1, "empty")) == "x.txt:1: empty"


def test_gold_ner_writer_round_trips(tmp_path):
    path = tmp_path / "train.txt"
    count = write_ner(path, "fr", [(["Jean", "dort"], ["B-PER", "O"]), (["Paris"], ["B-LOC"])])
    assert count == 2
    assert path.read_text() == "fr:Jean\tB-PER\nfr:dort\tO\n\nfr:Paris\tB-LOC\n\n"
    assert format_ner_sentence("fr", ["Paris"], ["B-LOC"]) == "fr:Paris\tB-LOC\n\n"
    assert [s.tags for s in read_ner(path, "fr")] == [["B-PER", "O"], ["B-LOC"]]


def test_conllu_sentence_writer_round_trips(tmp_path):
    words = [
        ConlluWord("Chats", "chat", "NOUN", "Number=Plur", 2, "nsubj"),
        ConlluWord("dorment", "dormir", "VERB", "_", 0, "root", "SpaceAfter=No"),
        ConlluWord(".", ".", "PUNCT", "_", 2, "punct"),
    ]
    text = format_conllu_sentence({"sent_id": "s1", "text": "Chats dorment."}, words)
    assert text.splitlines()[:3] == [
        "# sent_id = s1",
        "# text = Chats dorment.",
        "1\tChats\tchat\tNOUN\t_\tNumber=Plur\t2\tnsubj\t_\t_",
    ]
    assert text.endswith("\t_\tSpaceAfter=No\n3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_\n\n")
    (sentence,) = read_conllu(write(tmp_path, "s.conllu", text))
    assert sentence.words == ["Chats", "dorment", "."]
    assert sentence.heads == [2, 0, 2]


def test_xnli_writers_round_trip(tmp_path):
    row = format_xnli_row({"language": "en", "gold_label": "neutral", "sentence1": "A.",
                           "sentence2": "B.", "promptID": "1", "pairID": "2"})  # fmt: skip
    assert row.count("\t") == len(XNLI_COLUMNS) - 1
    pairs = read_xnli(write(tmp_path, "dev.tsv", format_header(XNLI_COLUMNS) + row), "en")
    assert [(p.premise, p.hypothesis, p.label, p.pair_id) for p in pairs] == [
        ("A.", "B.", "neutral", "2")
    ]
    with pytest.raises(ValueError, match="no column"):
        format_xnli_row({"sentence3": "C."})
    text = format_header(XNLI_MT_COLUMNS) + format_xnli_mt_row("A.", "B.", "contradiction")
    assert text == "premise\thypo\tlabel\nA.\tB.\tcontradictory\n"
    assert read_xnli_train(write(tmp_path, "train.tsv", text))[0].label == "contradiction"


def test_muse_writer_round_trips_and_reader_reverses(tmp_path):
    text = format_muse_entry("cat", "chat") + format_muse_entry("cat", "minou") + "\n"
    path = write(tmp_path, "en-fr.txt", text + format_muse_entry("paris", "paris"))
    assert read_muse(path) == {"cat": {"chat": 1.0, "minou": 1.0}}
    assert read_muse(path, reverse=True) == {"chat": {"cat": 1.0}, "minou": {"cat": 1.0}}
    assert read_muse(path, keep_identical=True)["paris"] == {"paris": 1.0}


def test_word_translation_keeps_identical_pairs_as_muse_does(tmp_path):
    from xling.analysis.words import dictionary_pairs

    path = write(tmp_path, "en-fr.txt", "paris paris\ncat chat\ncat cat\n")
    assert dictionary_pairs(path) == [("paris", "paris"), ("cat", "chat"), ("cat", "cat")]


def test_alignments_round_trip(tmp_path):
    links = [[(0, 0), (1, 2), (1, 3)], [], [(10, 0)]]
    path = write(tmp_path, "en-fr.txt", "".join(format_alignment(pair) for pair in links))
    assert path.read_text() == "0-0 1-2 1-3\n\n10-0\n"
    assert read_alignments(path) == links


@pytest.mark.parametrize(
    ("text", "line", "bad"),
    [
        ("0-0 1-1\n0-0 1_1\n", 2, "'1_1'"),
        ("0-0\n\n2-\n", 3, "'2-'"),
        ("-1-0\n", 1, "'-1-0'"),
        ("0-0 1-1-2\n", 1, "'1-1-2'"),
        ("0-0\n0-x\n", 2, "'0-x'"),
        ("0-0\t1-1 ٣-1\n", 1, "'٣-1'"),  # an Arabic-Indic digit is no index
    ],
)
def test_alignment_bad_links_name_file_and_line(tmp_path, text, line, bad):
    path = write(tmp_path, "align.txt", text)
    with pytest.raises(DataFormatError, match=f"{bad} is not a word link") as error:
        read_alignments(path)
    assert error.value.line == line
    assert str(error.value).startswith(f"{path}:{line}: ")
    assert "0-1" in str(error.value)  # the fix shows a well-formed link


def test_alignment_non_utf8_file_names_the_line(tmp_path):
    path = tmp_path / "align.txt"
    path.write_bytes(b"0-0\n1-1 \xff\n")
    with pytest.raises(InputFileError, match="UTF-8") as error:
        read_alignments(path)
    assert error.value.line == 2


def test_layout_paths_are_relative_to_the_data_directory():
    assert layout.corpus("wiki", "fr") == "corpus/wiki/fr.txt"
    assert layout.parallel("zh") == "parallel/zh.txt"
    assert layout.parallel_words("zh") == "parallel/zh.words.txt"
    assert layout.alignment("en", "fr") == "parallel/align/en-fr.txt"
    assert layout.ner("wikiann", "fr", "dev") == "ner/wikiann/fr/dev.txt"
    assert layout.ud("ud23", "ru", "test") == "ud/ud23/ru/test.conllu"
    assert layout.xnli("dev") == "xnli/xnli.dev.tsv"
    assert layout.xnli_train() == "xnli/multinli.train.en.tsv"
    assert layout.muse("en", "fr", "train") == "muse/en-fr.train.txt"
    assert layout.tatoeba("en", "fr", "fr") == "tatoeba/en-fr.fr.txt"
    with pytest.raises(ValueError, match="xnli_train"):
        layout.xnli("train")


def test_task_files():
    assert layout.task_files("ner", "wikiann", "fr", ["test"]) == {
        "test": "ner/wikiann/fr/test.txt"
    }
    assert layout.task_files("parsing", "ud23", "en", ("train", "dev")) == {
        "train": "ud/ud23/en/train.conllu",
        "dev": "ud/ud23/en/dev.conllu",
    }
    assert layout.task_files("xnli", None, "en", ["train", "dev", "test"]) == {
        "train": "xnli/multinli.train.en.tsv",
        "dev": "xnli/xnli.dev.tsv",
        "test": "xnli/xnli.test.tsv",
    }
    assert layout.task_files("xnli", None, "fr", ["test"]) == {"test": "xnli/xnli.test.tsv"}
    with pytest.raises(ValueError, match="English training data only"):
        layout.task_files("xnli", None, "fr", ["train"])
    with pytest.raises(ValueError, match="needs a dataset"):
        layout.task_files("ner", None, "fr", ["train"])
    # POS tagging (Muller et al. 2021) reads the parsing treebanks.
    assert layout.task_files("pos", "ud23", "fr", ["train"]) == {"train": "ud/ud23/fr/train.conllu"}
    with pytest.raises(ValueError, match="no data layout"):
        layout.task_files("qa", "ud23", "fr", ["train"])
