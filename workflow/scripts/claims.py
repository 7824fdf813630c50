"""Adapter: the papers' claims checked against this run (claims.md, claims.json)."""

import _bootstrap


def main(smk):
    from xling.report import claims

    run = claims.Run.load(
        dict(smk.input.items()), smk.params.english_prime, smk.params.muller_layers
    )
    verdicts = claims.evaluate(run)
    claims.write_claims(verdicts, smk.output.md, smk.output.json, smk.params.study)
    for verdict in verdicts:
        print(f"{verdict.claim.id}: {verdict.verdict}")


_bootstrap.run(main, snakemake)
