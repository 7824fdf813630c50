"""Stage 1: get the study's inputs (downloads, archives, format conversions) into R/data/."""
