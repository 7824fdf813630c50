"""Stage 7: tables and figures in the papers' layouts."""
