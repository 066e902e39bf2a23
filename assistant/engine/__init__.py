"""The conversation engine: understand a question into a typed Query, plan tool calls, compose a typed Answer.

Layers (imports point down only): query (the typed value) <- numbers, lexicon <- understand <- plan <- compose <- graph.
"""
