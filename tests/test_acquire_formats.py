"""XNLI import and parallel extraction; NER imports (WikiAnn, CoNLL 2003, Levow 2006)."""

import pytest

from xling.acquire.ner_import import (
    import_ner,
    iob1_to_iob2,
    read_wikiann,
    realign_to_words,
)
from xling.acquire.xnli import import_xnli, parallel_sentences
from xling.base.errors import DataFormatError, InputFileError
from xling.contracts.xnli import XNLI_REQUIRED, tsv_rows

HEADER = [
    "language", "gold_label", "sentence1_binary_parse", "sentence2_binary_parse",
    "sentence1_parse", "sentence2_parse", "sentence1", "sentence2", "promptID", "pairID",
    "genre", "label1", "label2", "label3", "label4", "label5", "sentence1_tokenized",
    "sentence2_tokenized", "match",
]  # fmt: skip


def xnli_row(lang, prompt, pair, s1, s2, label="neutral"):
    row = dict.fromkeys(HEADER, "")
    row.update(language=lang, gold_label=label, sentence1=s1, sentence2=s2)
    row.update(promptID=str(prompt), pairID=str(pair))
    return "\t".join(row[c] for c in HEADER)


def write_xnli(path, rows):
    path.write_text("\t".join(HEADER) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")


def test_parallel_sentences_keep_premises_once_and_align_languages(tmp_path):
    rows = [
        xnli_row("en", 1, 10, 'He said "yes".', "He agreed."),
        xnli_row("en", 1, 11, 'He said "yes".', "He refused."),
        xnli_row("fr", 1, 11, "Il a dit « oui ».", "Il a refusé."),
        xnli_row("fr", 1, 10, "Il a dit « oui ».", "Il a accepté."),
        xnli_row("en", 2, 20, "Only English.", "Not in French."),
    ]
    write_xnli(tmp_path / "dev.tsv", rows)
    sentences = parallel_sentences([tmp_path / "dev.tsv"], ["en", "fr"])
    assert sentences["en"] == ['He said "yes".', "He agreed.", "He refused."]
    assert sentences["fr"] == ["Il a dit « oui ».", "Il a accepté.", "Il a refusé."]


def test_xnli_row_with_wrong_field_count_names_the_line(tmp_path):
    write_xnli(tmp_path / "dev.tsv", [xnli_row("en", 1, 1, "a", "b"), "en\tneutral\tonly three"])
    with pytest.raises(DataFormatError, match=r"dev.tsv:3: 3 tab-separated fields"):
        list(tsv_rows(tmp_path / "dev.tsv", XNLI_REQUIRED))


def test_import_xnli_finds_the_files_in_the_unpacked_archives(tmp_path):
    (tmp_path / "x" / "XNLI-1.0").mkdir(parents=True)
    (tmp_path / "mt" / "XNLI-MT-1.0" / "multinli").mkdir(parents=True)
    write_xnli(tmp_path / "x/XNLI-1.0/xnli.dev.tsv", [xnli_row("en", 1, 1, "a", "b")])
    write_xnli(tmp_path / "x/XNLI-1.0/xnli.test.tsv", [xnli_row("en", 2, 2, "c", "d")])
    train = tmp_path / "mt/XNLI-MT-1.0/multinli/multinli.train.en.tsv"
    train.write_text("premise\thypo\tlabel\na\tb\tcontradictory\n")
    out = tmp_path / "out"
    import_xnli(
        tmp_path / "x", tmp_path / "mt", out / "dev.tsv", out / "test.tsv", out / "train.tsv"
    )
    assert (out / "train.tsv").read_text() == train.read_text()
    assert "\tc\td\t" in (out / "test.tsv").read_text()
    # a label that is not NLI's stops the import (not the first fine-tuning job, hours later)
    write_xnli(tmp_path / "x/XNLI-1.0/xnli.dev.tsv", [xnli_row("en", 1, 1, "a", "b", "entails")])
    with pytest.raises(DataFormatError, match=r"xnli\.dev\.tsv:2: label 'entails' is not an NLI"):
        import_xnli(
            tmp_path / "x", tmp_path / "mt", out / "dev.tsv", out / "test.tsv", out / "train.tsv"
        )


def test_a_carriage_return_inside_an_xnli_row_names_the_line(tmp_path):
    write_xnli(
        tmp_path / "dev.tsv", [xnli_row("en", 1, 1, "a", "b"), xnli_row("en", 2, 2, "c\rd", "e")]
    )
    with pytest.raises(DataFormatError, match=r"dev\.tsv:3: not a tab-separated row"):
        list(tsv_rows(tmp_path / "dev.tsv", XNLI_REQUIRED))


def test_iob1_to_iob2():
    assert iob1_to_iob2(["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG"]) == [
        "B-PER", "I-PER", "O", "B-LOC", "B-LOC", "B-ORG",
    ]  # fmt: skip


def test_wikiann_reader_rejects_bad_lines(tmp_path):
    path = tmp_path / "train"
    path.write_text("fr:Paris\tB-LOC\nfr:est\tO\n\nfr:Lyon\tB-CITY\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"train:4: unknown tag 'B-CITY'"):
        read_wikiann(path, "fr")
    path.write_text("Paris\tB-LOC\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"train:1: .*lacks the language prefix 'fr:'"):
        read_wikiann(path, "fr")


def test_realignment_to_segmenter_words():
    text = "张三在北京工作"
    tags = ["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O", "O"]
    words, word_tags = realign_to_words(text, tags, lambda s: ["张三", "在", "北京", "工作"])
    assert words == ["张三", "在", "北京", "工作"]
    assert word_tags == ["B-PER", "O", "B-LOC", "O"]
    # an entity starting inside a segmenter word still marks that word
    words, word_tags = realign_to_words(text, tags, lambda s: ["张三在", "北京工作"])
    assert word_tags == ["B-PER", "B-LOC"]


def test_import_conll2003_drops_misc_and_converts_to_iob2(tmp_path):
    manual = tmp_path / "manual" / "conll2003"
    manual.mkdir(parents=True)
    text = (
        "-DOCSTART- -X- -X- O\n\nEU NNP B-NP I-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP I-MISC\n\n"
    )
    for name in ("eng.train", "eng.testa", "eng.testb"):
        (manual / name).write_text(text)
    # a byte-order mark and Windows line ends, as a file saved on another system may have
    (manual / "eng.testb").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    outputs = {split: tmp_path / f"{split}.txt" for split in ("train", "dev", "test")}
    counts = import_ner("conll2003", "en", tmp_path / "manual", outputs)
    assert counts == {"train": 1, "dev": 1, "test": 1}
    assert outputs["test"].read_text() == "en:EU\tB-ORG\nen:rejects\tO\nen:German\tO\n\n"
    (manual / "eng.testa").write_bytes(text.encode() + b"caf\xe9 NN B-NP O\n")
    with pytest.raises(InputFileError, match=r"eng\.testa.*line 7"):
        import_ner("conll2003", "en", tmp_path / "manual", outputs)


def test_missing_manual_data_says_where_to_put_it(tmp_path):
    outputs = {split: tmp_path / f"{split}.txt" for split in ("train", "dev", "test")}
    with pytest.raises(FileNotFoundError, match=r"wikiann/fr/train.*put it under"):
        import_ner("wikiann", "fr", tmp_path / "manual", outputs)


def test_ud_import_copies_and_validates_the_treebank(tmp_path):
    from xling.acquire.ud import import_treebank

    sentence = (
        "# sent_id = 1\n# text = Hi there\n"
        "1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n2\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\t_\n\n"
    )
    folder = tmp_path / "ud-treebanks-v2.3" / "UD_English-EWT"
    folder.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        (folder / f"en_ewt-ud-{split}.conllu").write_text(sentence)
    outputs = {split: tmp_path / "out" / f"{split}.conllu" for split in ("train", "dev", "test")}
    assert import_treebank(tmp_path, "UD_English-EWT", outputs) == {"train": 1, "dev": 1, "test": 1}
    assert outputs["test"].read_text() == sentence
    with pytest.raises(FileNotFoundError, match=r"config key data\.ud\.ud23\.treebanks"):
        import_treebank(tmp_path, "UD_French-GSD", outputs, "ud23")
