"""Readers: stateful, PascalCase dataset readers (`ndd.readers.File`, ...)."""
