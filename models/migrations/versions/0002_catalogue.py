"""catalogue

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 22:31:58.775516
"""

import sqlalchemy as sa
from alembic import op


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('artists',
    sa.Column('id', sa.String(length=80), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('name_key', sa.String(length=200), nullable=False),
    sa.Column('genre', sa.String(length=60), nullable=False),
    sa.Column('country', sa.String(length=100), nullable=False),
    sa.Column('city', sa.String(length=100), nullable=False),
    sa.Column('image_url', sa.String(length=500), nullable=False),
    sa.Column('verified', sa.Boolean(), nullable=False),
    sa.Column('links', sa.JSON(), nullable=False),
    sa.Column('bio', sa.Text(), nullable=False),
    sa.Column('aliases', sa.JSON(), nullable=False),
    sa.Column('agency', sa.JSON(), nullable=True),
    sa.Column('source', sa.String(length=100), nullable=False),
    sa.Column('source_url', sa.String(length=500), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_artists'))
    )
    with op.batch_alter_table('artists', schema=None) as batch_op:
        batch_op.create_index('ix_artists_genre_name_key', ['genre', 'name_key', 'id'], unique=False)
        batch_op.create_index('ix_artists_name_key_id', ['name_key', 'id'], unique=False)

    op.create_table('genres',
    sa.Column('slug', sa.String(length=60), nullable=False),
    sa.Column('name', sa.String(length=60), nullable=False),
    sa.Column('group', sa.String(length=60), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('slug', name=op.f('pk_genres')),
    sa.UniqueConstraint('name', name=op.f('uq_genres_name')),
    sa.UniqueConstraint('position', name=op.f('uq_genres_position'))
    )
    op.create_table('releases',
    sa.Column('id', sa.String(length=80), nullable=False),
    sa.Column('title', sa.String(length=300), nullable=False),
    sa.Column('type', sa.String(length=10), nullable=False),
    sa.Column('release_date', sa.Date(), nullable=False),
    sa.Column('genre', sa.String(length=60), nullable=False),
    sa.Column('spotify_url', sa.String(length=500), nullable=True),
    sa.Column('apple_music_url', sa.String(length=500), nullable=True),
    sa.Column('cover_url', sa.String(length=500), nullable=False),
    sa.Column('source', sa.String(length=100), nullable=False),
    sa.Column('source_url', sa.String(length=500), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_releases'))
    )
    with op.batch_alter_table('releases', schema=None) as batch_op:
        batch_op.create_index('ix_releases_genre_release_date', ['genre', 'release_date', 'id'], unique=False)
        batch_op.create_index('ix_releases_release_date_id', ['release_date', 'id'], unique=False)

    op.create_table('venues',
    sa.Column('id', sa.String(length=80), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('name_key', sa.String(length=200), nullable=False),
    sa.Column('city', sa.String(length=100), nullable=False),
    sa.Column('city_key', sa.String(length=100), nullable=False),
    sa.Column('country', sa.String(length=2), nullable=False),
    sa.Column('area', sa.String(length=100), nullable=False),
    sa.Column('address', sa.String(length=300), nullable=False),
    sa.Column('website', sa.String(length=500), nullable=False),
    sa.Column('image_url', sa.String(length=500), nullable=False),
    sa.Column('lat', sa.Float(), nullable=False),
    sa.Column('lng', sa.Float(), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('rating', sa.Float(), nullable=False),
    sa.Column('reviews_count', sa.Integer(), nullable=False),
    sa.Column('info', sa.Text(), nullable=False),
    sa.Column('accessibility', sa.Text(), nullable=False),
    sa.Column('rules', sa.JSON(), nullable=False),
    sa.Column('rules_url', sa.String(length=500), nullable=False),
    sa.Column('facts', sa.JSON(), nullable=False),
    sa.Column('source', sa.String(length=100), nullable=False),
    sa.Column('source_url', sa.String(length=500), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_venues'))
    )
    with op.batch_alter_table('venues', schema=None) as batch_op:
        batch_op.create_index('ix_venues_city_key_name_key', ['city_key', 'name_key', 'id'], unique=False)
        batch_op.create_index('ix_venues_name_key_id', ['name_key', 'id'], unique=False)

    op.create_table('events',
    sa.Column('id', sa.String(length=80), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('title', sa.String(length=300), nullable=False),
    sa.Column('date', sa.Date(), nullable=False),
    sa.Column('end_date', sa.Date(), nullable=True),
    sa.Column('last_date', sa.Date(), nullable=False),
    sa.Column('start', sa.String(length=5), nullable=False),
    sa.Column('end', sa.String(length=5), nullable=False),
    sa.Column('timezone', sa.String(length=60), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('cancelled', sa.Boolean(), nullable=False),
    sa.Column('cancel_reason', sa.String(length=500), nullable=True),
    sa.Column('postponed_to', sa.Date(), nullable=True),
    sa.Column('price', sa.Float(), nullable=True),
    sa.Column('price_max', sa.Float(), nullable=True),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('age', sa.Integer(), nullable=False),
    sa.Column('ticket_url', sa.String(length=500), nullable=True),
    sa.Column('artwork_url', sa.String(length=500), nullable=False),
    sa.Column('venue_id', sa.String(length=80), nullable=False),
    sa.Column('organisation_id', sa.String(length=40), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('timetable', sa.JSON(), nullable=False),
    sa.Column('maps', sa.JSON(), nullable=False),
    sa.Column('rules', sa.JSON(), nullable=False),
    sa.Column('dress', sa.String(length=300), nullable=True),
    sa.Column('source', sa.String(length=100), nullable=False),
    sa.Column('source_url', sa.String(length=500), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.Column('festival_key', sa.String(length=100), nullable=True),
    sa.Column('season', sa.Integer(), nullable=True),
    sa.Column('external_ticketing', sa.Boolean(), nullable=False),
    sa.Column('city_key', sa.String(length=100), nullable=False),
    sa.Column('lat', sa.Float(), nullable=False),
    sa.Column('lng', sa.Float(), nullable=False),
    sa.Column('search_key', sa.String(length=600), nullable=False),
    sa.ForeignKeyConstraint(['organisation_id'], ['organisations.id'], name=op.f('fk_events_organisation_id_organisations')),
    sa.ForeignKeyConstraint(['venue_id'], ['venues.id'], name=op.f('fk_events_venue_id_venues')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_events')),
    sa.UniqueConstraint('slug', name=op.f('uq_events_slug'))
    )
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index('ix_events_city_order', ['city_key', 'date', 'start', 'id'], unique=False)
        batch_op.create_index('ix_events_festival', ['festival_key', 'season'], unique=False)
        batch_op.create_index('ix_events_lat_lng', ['lat', 'lng'], unique=False)
        batch_op.create_index('ix_events_order', ['date', 'start', 'id'], unique=False)
        batch_op.create_index('ix_events_organisation_order', ['organisation_id', 'date', 'start', 'id'], unique=False)
        batch_op.create_index('ix_events_venue_order', ['venue_id', 'date', 'start', 'id'], unique=False)

    op.create_table('release_artists',
    sa.Column('release_id', sa.String(length=80), nullable=False),
    sa.Column('artist_id', sa.String(length=80), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['artist_id'], ['artists.id'], name=op.f('fk_release_artists_artist_id_artists')),
    sa.ForeignKeyConstraint(['release_id'], ['releases.id'], name=op.f('fk_release_artists_release_id_releases'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('release_id', 'artist_id', name=op.f('pk_release_artists'))
    )
    with op.batch_alter_table('release_artists', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_release_artists_artist_id'), ['artist_id'], unique=False)

    op.create_table('event_artists',
    sa.Column('event_id', sa.String(length=80), nullable=False),
    sa.Column('artist_id', sa.String(length=80), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('date', sa.Date(), nullable=False),
    sa.ForeignKeyConstraint(['artist_id'], ['artists.id'], name=op.f('fk_event_artists_artist_id_artists')),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_event_artists_event_id_events'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('event_id', 'artist_id', name=op.f('pk_event_artists'))
    )
    with op.batch_alter_table('event_artists', schema=None) as batch_op:
        batch_op.create_index('ix_event_artists_artist_order', ['artist_id', 'date', 'event_id'], unique=False)

    op.create_table('event_genres',
    sa.Column('event_id', sa.String(length=80), nullable=False),
    sa.Column('genre', sa.String(length=60), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('date', sa.Date(), nullable=False),
    sa.Column('start', sa.String(length=5), nullable=False),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_event_genres_event_id_events'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('event_id', 'genre', name=op.f('pk_event_genres'))
    )
    with op.batch_alter_table('event_genres', schema=None) as batch_op:
        batch_op.create_index('ix_event_genres_order', ['genre', 'date', 'start', 'event_id'], unique=False)

    genres = sa.table("genres", sa.column("slug"), sa.column("name"), sa.column("group"),
                      sa.column("position"))
    # The fixed genre list (models/genres.py; the GenreName enum of the document).
    op.bulk_insert(genres, [
        {"slug": 'house', "name": 'House', "group": 'House', "position": 0},
        {"slug": 'deep-house', "name": 'Deep House', "group": 'House', "position": 1},
        {"slug": 'tech-house', "name": 'Tech House', "group": 'House', "position": 2},
        {"slug": 'progressive-house', "name": 'Progressive House', "group": 'House', "position": 3},
        {"slug": 'afro-house', "name": 'Afro House', "group": 'House', "position": 4},
        {"slug": 'melodic-house-techno', "name": 'Melodic House & Techno', "group": 'House', "position": 5},
        {"slug": 'disco', "name": 'Disco', "group": 'Disco', "position": 6},
        {"slug": 'nu-disco', "name": 'Nu Disco', "group": 'Disco', "position": 7},
        {"slug": 'italo-disco', "name": 'Italo Disco', "group": 'Disco', "position": 8},
        {"slug": 'techno', "name": 'Techno', "group": 'Techno', "position": 9},
        {"slug": 'hard-techno', "name": 'Hard Techno', "group": 'Techno', "position": 10},
        {"slug": 'minimal', "name": 'Minimal', "group": 'Techno', "position": 11},
        {"slug": 'acid', "name": 'Acid', "group": 'Techno', "position": 12},
        {"slug": 'industrial', "name": 'Industrial', "group": 'Techno', "position": 13},
        {"slug": 'trance', "name": 'Trance', "group": 'Trance', "position": 14},
        {"slug": 'psytrance', "name": 'Psytrance', "group": 'Trance', "position": 15},
        {"slug": 'hardstyle', "name": 'Hardstyle', "group": 'Hard dance', "position": 16},
        {"slug": 'hardcore', "name": 'Hardcore', "group": 'Hard dance', "position": 17},
        {"slug": 'uptempo', "name": 'Uptempo', "group": 'Hard dance', "position": 18},
        {"slug": 'frenchcore', "name": 'Frenchcore', "group": 'Hard dance', "position": 19},
        {"slug": 'drum-bass', "name": 'Drum & Bass', "group": 'Bass', "position": 20},
        {"slug": 'jungle', "name": 'Jungle', "group": 'Bass', "position": 21},
        {"slug": 'dubstep', "name": 'Dubstep', "group": 'Bass', "position": 22},
        {"slug": 'uk-garage', "name": 'UK Garage', "group": 'Bass', "position": 23},
        {"slug": 'bass-house', "name": 'Bass House', "group": 'Bass', "position": 24},
        {"slug": 'electro', "name": 'Electro', "group": 'Bass', "position": 25},
        {"slug": 'hip-hop', "name": 'Hip-Hop', "group": 'Urban', "position": 26},
        {"slug": 'r-b', "name": 'R&B', "group": 'Urban', "position": 27},
        {"slug": 'afrobeats', "name": 'Afrobeats', "group": 'Urban', "position": 28},
        {"slug": 'amapiano', "name": 'Amapiano', "group": 'Urban', "position": 29},
        {"slug": 'dancehall', "name": 'Dancehall', "group": 'Urban', "position": 30},
        {"slug": 'reggaeton', "name": 'Reggaeton', "group": 'Urban', "position": 31},
        {"slug": 'latin', "name": 'Latin', "group": 'Urban', "position": 32},
        {"slug": 'ambient', "name": 'Ambient', "group": 'Other', "position": 33},
        {"slug": 'pop', "name": 'Pop', "group": 'Other', "position": 34},
    ])

    if op.get_bind().dialect.name == "postgresql":
        # Great-circle distance in km; SQLite gets the same function from models/db.py.
        op.execute("""
            CREATE FUNCTION haversine_km(lat1 float8, lng1 float8, lat2 float8, lng2 float8)
            RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
              SELECT 12742.0 * asin(sqrt(
                sin(radians(lat2 - lat1) / 2) ^ 2
                + cos(radians(lat1)) * cos(radians(lat2)) * sin(radians(lng2 - lng1) / 2) ^ 2))
            $$
        """)
        # Substring search (q) over folded keys: trigram indexes serve LIKE '%...%'.
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        for table, column in (("events", "search_key"), ("venues", "name_key"),
                              ("artists", "name_key")):
            op.execute(f"CREATE INDEX ix_{table}_{column}_trgm ON {table} "
                       f"USING gin ({column} gin_trgm_ops)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name in ("ix_events_search_key_trgm", "ix_venues_name_key_trgm",
                     "ix_artists_name_key_trgm"):
            op.execute(f"DROP INDEX IF EXISTS {name}")
        op.execute("DROP FUNCTION IF EXISTS haversine_km")
    with op.batch_alter_table('event_genres', schema=None) as batch_op:
        batch_op.drop_index('ix_event_genres_order')

    op.drop_table('event_genres')
    with op.batch_alter_table('event_artists', schema=None) as batch_op:
        batch_op.drop_index('ix_event_artists_artist_order')

    op.drop_table('event_artists')
    with op.batch_alter_table('release_artists', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_release_artists_artist_id'))

    op.drop_table('release_artists')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index('ix_events_venue_order')
        batch_op.drop_index('ix_events_organisation_order')
        batch_op.drop_index('ix_events_order')
        batch_op.drop_index('ix_events_lat_lng')
        batch_op.drop_index('ix_events_festival')
        batch_op.drop_index('ix_events_city_order')

    op.drop_table('events')
    with op.batch_alter_table('venues', schema=None) as batch_op:
        batch_op.drop_index('ix_venues_name_key_id')
        batch_op.drop_index('ix_venues_city_key_name_key')

    op.drop_table('venues')
    with op.batch_alter_table('releases', schema=None) as batch_op:
        batch_op.drop_index('ix_releases_release_date_id')
        batch_op.drop_index('ix_releases_genre_release_date')

    op.drop_table('releases')
    op.drop_table('genres')
    with op.batch_alter_table('artists', schema=None) as batch_op:
        batch_op.drop_index('ix_artists_name_key_id')
        batch_op.drop_index('ix_artists_genre_name_key')

    op.drop_table('artists')
