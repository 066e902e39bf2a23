"""The Gradio chat app's pieces (app.py is the entry)."""
