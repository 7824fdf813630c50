"""Adapter: read and encode one Muller setup's files once, for all of its runs."""

import _bootstrap


def main(smk):
    from xling.analysis.loading import load_model_and_tokenizer
    from xling.finetune import FinetuneSettings
    from xling.finetune.tasks import make_task
    from xling.muller.encoded import encode_setup, save_encoded

    setup = smk.params.setup
    task, source = setup["task"], setup["source"]
    settings = FinetuneSettings.from_config(task, smk.params.settings, seed=0, source_lang=source)
    encoder, tokenizer = load_model_and_tokenizer(smk.params.model)
    spec = make_task(task, tokenizer, settings)
    tests = {name: (lang, smk.input[f"test_{name}"]) for name, lang in setup["evaluations"].items()}
    encoded = encode_setup(
        spec,
        source,
        smk.input.train,
        smk.input.dev,
        tests,
        settings.max_length,
        encoder.config.max_positions,
    )
    files = [smk.input.train, smk.input.dev, *(path for _, path in tests.values())]
    save_encoded(smk.output[0], encoded, files, task)
    sizes = {name: len(split.items) for name, split in encoded.test.items()}
    print(f"{task} {source}: {len(encoded.train.items)} train items, test {sizes}")


_bootstrap.run(main, snakemake)
