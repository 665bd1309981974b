"""Durable signals, parked continuations, timers, delivery and the sweeper."""
