"""The store's people: who someone is, how they sign in, and what they may do.

``credentials`` (tokens, sign-in links, web sessions), ``sign_in`` (single sign-on),
``roles`` (admins, their trail, the settings they change), ``groups`` (groups and
delegations) and ``invitations`` (a conversation shared by invitation). It imports the
engine and the ledger.
"""
