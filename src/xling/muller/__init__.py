"""Muller et al. (2021), "First Align, then Predict": RANDOM-INIT of layer groups before
fine-tuning and the cross-lingual similarity of pretrained and fine-tuned models."""

REFERENCE = "ref"  # the group name of the model without RANDOM-INIT
