"""Stage 6: alignment and similarity analyses of the pretrained encoders (Wu §5, Muller §2.2)."""
