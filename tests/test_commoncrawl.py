import lzma

import pytest

from xling.acquire.commoncrawl import sample_to_size, text_bytes


@pytest.fixture
def cc_file(tmp_path):
    lines = []
    for doc in range(2000):
        lines += [f"document {doc} paragraph {i} with some words" for i in range(3)] + [""]
    path = tmp_path / "fr.txt.xz"
    with lzma.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path, [line for line in lines if line]


def test_sample_matches_the_target_size_and_is_a_subset(cc_file, tmp_path):
    path, lines = cc_file
    total = text_bytes(path)
    assert total == sum(len(line.encode()) + 1 for line in lines)  # lines with their newline
    target = total // 4
    out = tmp_path / "cc.txt"
    written = sample_to_size(path, target, out, seed=3)
    sampled = out.read_text().splitlines()
    assert written == len(sampled)
    assert set(sampled) <= set(lines)
    size = sum(len(line.encode()) for line in sampled)
    assert abs(size - target) < 0.15 * target
    # seeded: the same subset again; another seed, another subset
    again = tmp_path / "again.txt"
    sample_to_size(path, target, again, seed=3)
    assert again.read_text() == out.read_text()
    other = tmp_path / "other.txt"
    sample_to_size(path, target, other, seed=4)
    assert other.read_text() != out.read_text()


def test_documents_are_kept_whole_and_in_order(cc_file, tmp_path):
    path, _ = cc_file
    out = tmp_path / "cc.txt"
    sample_to_size(path, text_bytes(path) // 10, out, seed=5)
    sampled = out.read_text().splitlines()
    documents = [line.split()[1] for line in sampled]
    assert len(sampled) % 3 == 0
    for start in range(0, len(sampled), 3):  # the three paragraphs of one document, in order
        assert documents[start : start + 3] == [documents[start]] * 3
        assert [line.split()[3] for line in sampled[start : start + 3]] == ["0", "1", "2"]


def test_small_source_is_kept_whole(cc_file, tmp_path):
    path, lines = cc_file
    out = tmp_path / "cc.txt"
    assert sample_to_size(path, 10**9, out, seed=0) == len(lines)


def test_a_byte_that_is_not_utf8_and_a_lone_carriage_return_do_not_break_lines(tmp_path):
    path = tmp_path / "ru.txt"
    path.write_bytes(b"first \xff line\nsecond\rstill second\n\nthird\n")
    out = tmp_path / "cc.txt"
    assert sample_to_size(path, 10**9, out, seed=0) == 3
    assert out.read_bytes().decode("utf-8").split("\n") == [
        "first \ufffd line",
        "second\rstill second",
        "third",
        "",
    ]


def test_a_truncated_xz_file_or_another_compression_names_the_file_and_the_fix(cc_file, tmp_path):
    import gzip

    from xling.base.errors import InputFileError

    path, _ = cc_file
    truncated = tmp_path / "de.txt.xz"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(InputFileError, match=r"de\.txt\.xz: damaged xz stream .*data\.commoncrawl"):
        text_bytes(truncated)
    gzipped = tmp_path / "ru.txt"
    gzipped.write_bytes(gzip.compress(b"a line\n"))
    with pytest.raises(InputFileError, match=r"ru\.txt: a gzip file; CC-100 files are xz"):
        sample_to_size(gzipped, 10, tmp_path / "out.txt", seed=0)
