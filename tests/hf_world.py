"""A tiny BERT with its own WordPiece tokenizer, written as ``transformers`` writes a model
directory, and small task files: the mBERT path of the tests, with no network.

The vocabulary covers the words of tests/finetune_world.py: whole function words, ``Zo``/``Qu``
word starts, the syllables as word starts and ``##`` continuations, and every character, so that
most words split into several WordPieces (as they do in mBERT) and nothing becomes ``[UNK]``.
"""

from pathlib import Path

import torch

from tests.finetune_world import (
    LANGS,
    World,
    write_ner_file,
    write_treebank,
    write_xnli_files,
)

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
SYLLABLES = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "da"]


def wordpiece_vocabulary(world: World) -> list[str]:
    whole = [*world.dets["en"], *world.dets["fr"], *world.verbs["en"], *world.verbs["fr"]]
    whole += [w for markers in world.markers.values() for w in markers.values()]
    characters = sorted({c for word in world.words() for c in word})
    pieces = [*whole, "Zo", "Qu", *SYLLABLES, *(f"##{s}" for s in SYLLABLES)]
    pieces += characters + [f"##{c}" for c in characters]
    return SPECIALS + sorted(set(pieces) - set(SPECIALS), key=pieces.index)


def write_world_files(root: Path, n_train: int = 120, n_eval: int = 40) -> Path:
    """NER, UD and XNLI files under ``root`` in tests/finetune_world.py's layout (its
    ``task_data`` names them); training files in English only."""
    world = World()
    for lang in LANGS:
        for split, n in (("train", n_train), ("dev", n_eval), ("test", n_eval)):
            if split == "train" and lang != "en":
                continue
            write_ner_file(world, root / "ner" / lang / f"{split}.txt", lang, n)
            write_treebank(world, root / "ud" / lang / f"{split}.conllu", lang, n)
    write_xnli_files(world, root / "xnli", n_train, n_eval // 2)
    return root


def build_tiny_bert(root: Path, *, layers: int = 4, max_positions: int = 64, seed: int = 0) -> Path:
    """``root/bert``: a random BertModel (width 32) and its WordPiece tokenizer, saved with
    ``save_pretrained`` as a hub checkpoint is laid out."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocab_dir = root / "wordpiece"
    vocab_dir.mkdir(parents=True, exist_ok=True)
    (vocab_dir / "vocab.txt").write_text("\n".join(wordpiece_vocabulary(World())) + "\n")
    # from_pretrained on a directory holding vocab.txt: the constructor's vocab_file argument is
    # ignored by transformers 5.
    tokenizer = BertTokenizerFast.from_pretrained(str(vocab_dir), do_lower_case=False)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
    )
    torch.manual_seed(seed)
    out = root / "bert"
    BertModel(config).save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out
