"""Throwaway PostgreSQL databases: a migrated one is emptied after use and handed out again,
unless its schema changed under the test."""

from __future__ import annotations

import psycopg
import pytest

from pawflow.testing import throwaway_postgres
from tests.conftest import require_postgres

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _postgres() -> None:
    require_postgres()


def test_a_migrated_database_comes_back_empty_with_its_sequences_from_the_start() -> None:
    with throwaway_postgres(migrated=True) as first, psycopg.connect(first) as conn:
        conn.execute("INSERT INTO users (id, created_at) VALUES ('ada', 0)")
        [(event,)] = conn.execute("SELECT nextval(pg_get_serial_sequence('events', 'seq'))")
        conn.execute("SELECT nextval(pg_get_serial_sequence('events', 'seq'))")
    with throwaway_postgres(migrated=True) as second, psycopg.connect(second) as conn:
        assert second == first  # the same database, emptied
        assert conn.execute("SELECT count(*) FROM users").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM pawflow_schema").fetchone() != (0,)
        again = conn.execute("SELECT nextval(pg_get_serial_sequence('events', 'seq'))")
        assert again.fetchone() == (event,)


def test_a_database_whose_schema_changed_is_never_handed_out_again() -> None:
    with throwaway_postgres(migrated=True) as changed, psycopg.connect(changed) as conn:
        conn.execute("ALTER TABLE users ADD COLUMN nickname text")
    with throwaway_postgres(migrated=True) as fresh, psycopg.connect(fresh) as conn:
        assert fresh != changed
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'users'"
        ).fetchall()
        assert ("nickname",) not in columns
    with psycopg.connect(changed.rpartition("/")[0] + "/test") as admin:
        gone = admin.execute(
            "SELECT count(*) FROM pg_database WHERE datname = %s", (changed.rpartition("/")[2],)
        )
        assert gone.fetchone() == (0,)


def test_a_connection_left_open_is_ended_before_the_database_is_emptied() -> None:
    with throwaway_postgres(migrated=True) as url:
        left = psycopg.connect(url)
        left.execute("INSERT INTO users (id, created_at) VALUES ('bo', 0)")
    with throwaway_postgres(migrated=True) as again, psycopg.connect(again) as conn:
        assert again == url
        assert conn.execute("SELECT count(*) FROM users").fetchone() == (0,)
    with pytest.raises(psycopg.OperationalError):  # its server process was ended
        left.execute("SELECT 1")
    left.close()
