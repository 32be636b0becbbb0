"""The bus process."""
