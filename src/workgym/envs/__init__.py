"""Reference environments shipped with workgym."""
