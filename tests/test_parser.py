"""The tree decoder (optimal, single-rooted, well-formed) and the biaffine parser head."""

import itertools

import numpy as np
import pytest
import torch

from xling.finetune.heads import BiaffineParser, arc_mask, parser_loss
from xling.finetune.mst import decode_trees, mst_heads

torch.set_num_threads(1)


def is_single_rooted_tree(heads) -> bool:
    heads = list(heads)
    n = len(heads) - 1
    if sum(h == 0 for h in heads[1:]) != 1:
        return False
    for word in range(1, n + 1):
        seen, node = set(), word
        while node != 0:
            if node in seen or not 0 <= heads[node] <= n:
                return False
            seen.add(node)
            node = heads[node]
    return True


def tree_score(scores, heads) -> float:
    return sum(scores[d, heads[d]] for d in range(1, len(heads)))


def brute_force_best(scores) -> float:
    n = len(scores) - 1
    best = -np.inf
    for choice in itertools.product(range(n + 1), repeat=n):
        heads = [0, *choice]
        if any(heads[d] == d for d in range(1, n + 1)) or not is_single_rooted_tree(heads):
            continue
        best = max(best, tree_score(scores, heads))
    return best


def test_mst_matches_brute_force_on_small_sentences():
    rng = np.random.default_rng(0)
    for _ in range(60):
        n = int(rng.integers(1, 6))
        scores = rng.normal(size=(n + 1, n + 1))
        heads = mst_heads(scores)
        assert heads[0] == 0
        assert is_single_rooted_tree(heads)
        assert tree_score(scores, heads) == pytest.approx(brute_force_best(scores))


def test_mst_keeps_one_root_when_every_word_prefers_root():
    scores = np.full((5, 5), -5.0)
    scores[1:, 0] = 0.0  # every word would attach to ROOT
    scores[2, 1] = scores[3, 1] = scores[4, 3] = -1.0
    heads = mst_heads(scores)
    assert list(heads) == [0, 0, 1, 1, 3]


def test_mst_breaks_cycles():
    scores = np.full((4, 4), -10.0)
    scores[1, 2] = scores[2, 1] = 0.0  # 1 <-> 2 is a greedy cycle
    scores[3, 1] = 0.0
    scores[1, 0], scores[2, 0], scores[3, 0] = -3.0, -1.0, -8.0
    heads = mst_heads(scores)
    assert is_single_rooted_tree(heads)
    assert list(heads) == [0, 2, 0, 1]


def test_mst_rejects_bad_scores():
    with pytest.raises(ValueError, match="NaN"):
        mst_heads(np.array([[0.0, 0.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match=r"\(n \+ 1, n \+ 1\)"):
        mst_heads(np.zeros((1, 1)))


def test_batch_decoding_gives_trees_equal_to_single_decoding():
    torch.manual_seed(0)
    lengths = torch.tensor([1, 2, 5, 9, 9, 30, 4])
    size = int(lengths.max()) + 1
    scores = torch.randn(len(lengths), size, size) * 3
    heads = decode_trees(scores, lengths)
    for b, n in enumerate(lengths.tolist()):
        row = heads[b, : n + 1].numpy()
        assert is_single_rooted_tree(row)
        assert (heads[b, n + 1 :] == 0).all()  # padding stays 0
        single = mst_heads(scores[b, : n + 1, : n + 1].numpy())
        sub = scores[b, : n + 1, : n + 1].double().numpy()
        assert tree_score(sub, row) == pytest.approx(tree_score(sub, single))


def test_batch_decoding_keeps_greedy_heads_that_are_already_a_tree():
    gold = torch.tensor([[0, 2, 0, 2, 3], [0, 0, 1, 0, 0]])
    lengths = torch.tensor([4, 2])
    scores = torch.full((2, 5, 5), -4.0)
    for b in range(2):
        for d in range(1, int(lengths[b]) + 1):
            scores[b, d, gold[b, d]] = 0.0
    assert torch.equal(decode_trees(scores, lengths), gold)


def test_long_sentences_decode_to_well_formed_trees():
    rng = np.random.default_rng(1)
    for n in (50, 120):
        heads = mst_heads(rng.normal(size=(n + 1, n + 1)))
        assert is_single_rooted_tree(heads)


def test_arc_mask_excludes_loops_and_padding():
    mask = arc_mask(torch.tensor([2]), 4)[0]
    assert not mask.diagonal().any()
    assert mask[1, 0] and mask[1, 2] and not mask[1, 3]


def test_parser_learns_a_fixed_batch():
    torch.manual_seed(0)
    parser = BiaffineParser(dim=16, num_labels=5, arc_dim=24, label_dim=8, dropout=0.0)
    hidden = torch.randn(2, 7, 16)
    first_subword = torch.tensor([[1, 2, 4, 5], [1, 3, 0, 0]])
    lengths = torch.tensor([4, 2])
    gold_heads = torch.tensor([[-100, 2, 0, 2, 3], [-100, 0, 1, -100, -100]])
    gold_labels = torch.tensor([[-100, 1, 0, 2, 3], [-100, 0, 4, -100, -100]])
    optimizer = torch.optim.Adam(parser.parameters(), lr=1e-2)
    losses = []
    for _ in range(60):
        arcs, label_dep, label_head = parser(hidden, first_subword)
        assert arcs.shape == (2, 5, 5)
        loss = parser_loss(parser, arcs, label_dep, label_head, lengths, gold_heads, gold_labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0]
    arcs, label_dep, label_head = parser(hidden, first_subword)
    heads = decode_trees(arcs.detach().log_softmax(-1), lengths)
    assert heads[0].tolist() == [0, 2, 0, 2, 3]
    assert heads[1, :3].tolist() == [0, 0, 1]
    labels = parser.label_scores(label_dep, label_head, heads).argmax(-1)
    assert labels[0, 1:].tolist() == [1, 0, 2, 3]


class OneIdPerWord:
    """Minimal stand-in for the tokenizer: one id per word."""

    pad_id, unk_id, eos_id = 0, 1, 3

    def encode_words(self, words, lang):
        return [[5 + len(word) % 7] for word in words]


def test_words_beyond_the_length_limit_still_get_a_tree(tmp_path):
    from xling.contracts.conllu import read_conllu
    from xling.finetune import FinetuneSettings
    from xling.finetune.tasks import TaskModel, make_task
    from xling.model import EncoderConfig, MLMEncoder

    lines = [
        f"{i}\tw{i}\tw\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t_"
        for i in range(1, 9)
    ]
    path = tmp_path / "long.conllu"
    path.write_text("\n".join(lines) + "\n\n")
    settings = FinetuneSettings(epochs=1, max_length=5, seed=0, arc_dim=8, label_dim=4)
    task = make_task("parsing", OneIdPerWord(), settings)
    items = task.encode(read_conllu(path), "en", max_length=5)  # 3 of 8 words fit
    assert len(items[0]["first_subword"]) == 3
    torch.manual_seed(0)
    config = EncoderConfig(vocab_size=12, languages=["en"], dim=8, layers=1, heads=1, ffn_dim=8)
    model = TaskModel(MLMEncoder(config), task.build_head(8, 0.0)).eval()
    with torch.no_grad():
        ((heads, rels),) = task.predict(model, task.collate(items), "en")
    assert len(heads) == len(rels) == 8
    assert is_single_rooted_tree([0, *heads])
    root_word = heads.index(0) + 1
    assert heads[3:] == [root_word] * 5 and rels[3:] == ["dep"] * 5
