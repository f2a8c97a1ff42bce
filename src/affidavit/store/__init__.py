"""The store: the one door that writes the wiki (apply), its journal and recovery, rendering, git."""
