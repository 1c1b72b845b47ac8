"""Sphinx configuration for the release notes (reno)."""

project = 'baremetal release notes'
extensions = ['reno.sphinxext']
master_doc = 'index'
html_theme = 'alabaster'
exclude_patterns = []
