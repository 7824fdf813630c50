"""The foundation every other package stands on: errors that name the file and the fix, atomic
writes, strict line and YAML reading, file digests. Imports nothing else of xling."""
