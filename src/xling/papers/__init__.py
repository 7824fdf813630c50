"""Facts of the papers this workflow reproduces, one module per paper.

``wu2020``: Wu, Conneau et al. (2020), "Emerging Cross-lingual Structure in Pretrained Language
Models" (Table 1: how each model was built, and its numbers). Each module holds only what the paper
states, is torch-free and cheap to import: the Snakefile reads it when it validates a config.
"""
