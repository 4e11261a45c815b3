"""Contests turned into tasks the day they are held: their files read (`read.py`), their golds
checked by the verifier and the task kept in the user task folder (`add.py`)."""
