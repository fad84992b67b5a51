"""token reports and badges

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26 01:17:59.684829
"""

import sqlalchemy as sa
from alembic import op


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('badges',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('family', sa.String(length=20), nullable=False),
    sa.Column('tier', sa.Integer(), nullable=False),
    sa.Column('mark', sa.String(length=8), nullable=False),
    sa.Column('name_nl', sa.String(length=80), nullable=False),
    sa.Column('name_en', sa.String(length=80), nullable=False),
    sa.Column('description_nl', sa.String(length=300), nullable=False),
    sa.Column('description_en', sa.String(length=300), nullable=False),
    sa.Column('counts', sa.String(length=30), nullable=False),
    sa.Column('needs', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_badges')),
    sa.UniqueConstraint('position', name=op.f('uq_badges_position'))
    )
    op.create_table('earned_badges',
    sa.Column('person_id', sa.String(length=40), nullable=False),
    sa.Column('badge_id', sa.String(length=40), nullable=False),
    sa.Column('value', sa.Integer(), nullable=False),
    sa.Column('earned_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['badge_id'], ['badges.id'], name=op.f('fk_earned_badges_badge_id_badges')),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_earned_badges_person_id_people'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('person_id', 'badge_id', name=op.f('pk_earned_badges'))
    )
    with op.batch_alter_table('earned_badges', schema=None) as batch_op:
        batch_op.create_index('ix_earned_badges_person_order', ['person_id', 'earned_at', 'badge_id'], unique=False)

    op.create_table('festival_figures',
    sa.Column('event_id', sa.String(length=80), nullable=False),
    sa.Column('reports', sa.Integer(), nullable=False),
    sa.Column('token_price', sa.Float(), nullable=False),
    sa.Column('drink_price', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_festival_figures_event_id_events'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('event_id', name=op.f('pk_festival_figures'))
    )
    op.create_table('token_reports',
    sa.Column('id', sa.String(length=80), nullable=False),
    sa.Column('event_id', sa.String(length=80), nullable=False),
    sa.Column('person_id', sa.String(length=40), nullable=True),
    sa.Column('paid', sa.Float(), nullable=False),
    sa.Column('tokens', sa.Float(), nullable=False),
    sa.Column('drink_tokens', sa.Float(), nullable=False),
    sa.Column('channel', sa.String(length=10), nullable=False),
    sa.Column('refund', sa.String(length=10), nullable=False),
    sa.Column('tier', sa.String(length=10), nullable=False),
    sa.Column('outlier', sa.Boolean(), nullable=False),
    sa.Column('source', sa.String(length=100), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_token_reports_event_id_events'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_token_reports_person_id_people'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_token_reports'))
    )
    with op.batch_alter_table('token_reports', schema=None) as batch_op:
        batch_op.create_index('ix_token_reports_event_order', ['event_id', 'created_at', 'id'], unique=False)
        batch_op.create_index('ix_token_reports_person', ['person_id', 'created_at'], unique=False)

    badges = sa.table("badges", *(sa.column(name) for name in (
        "id", "position", "family", "tier", "mark", "name_nl", "name_en", "description_nl",
        "description_en", "counts", "needs")))
    op.bulk_insert(badges, [
        {"id": f"{family}-{tier}", "position": 10 * number + tier, "family": family,
         "tier": tier, "mark": mark, "name_nl": nl, "name_en": en,
         "description_nl": said_nl[needs > 1].format(needs),
         "description_en": said_en[needs > 1].format(needs),
         "counts": counts, "needs": needs}
        for number, (family, counts, mark, said_nl, said_en, tiers) in enumerate(CATALOGUE)
        for tier, (needs, nl, en) in enumerate(tiers, start=1)])


# The badge catalogue (decisions.md "Badges"): per family what is counted, its mark, the
# descriptions (for one, for more), and per tier (1..4) what is needed and the names in Dutch and English.
# "Attended" is a ticket scanned at the door; reports count when they are not outliers.
CATALOGUE = (
    ("regular", "events_attended", "🎟",
     ("Een avond uit: een ticket gescand aan de deur.",
      "{} avonden uit: tickets gescand aan de deur."),
     ("A night out: a ticket scanned at the door.",
      "{} nights out: tickets scanned at the door."),
     ((1, "Eerste nacht", "First night"), (10, "Vaste gast", "Regular"),
      (25, "Stamgast", "Local legend"), (50, "Nachtdier", "Creature of the night"))),
    ("explorer", "venues_visited", "🧭",
     (None, "Uit geweest in {} verschillende zalen en clubs."),
     (None, "Out at {} different venues and clubs."),
     ((3, "Verkenner", "Explorer"), (10, "Zaalhopper", "Venue hopper"),
      (25, "Ontdekkingsreiziger", "Discoverer"), (50, "Wegwijzer", "Pathfinder"))),
    ("nomad", "cities_visited", "🚆",
     (None, "Uit geweest in {} verschillende steden."),
     (None, "Out in {} different cities."),
     ((2, "Dagjesmens", "Day tripper"), (5, "Reiziger", "Traveller"),
      (10, "Nomade", "Nomad"), (20, "Wereldburger", "Globetrotter"))),
    ("omnivore", "genres_heard", "🎧",
     (None, "Avonden bezocht in {} verschillende genres."),
     (None, "Nights attended in {} different genres."),
     ((3, "Nieuwsgierig", "Curious ears"), (8, "Open oren", "Open mind"),
      (15, "Alleseter", "Omnivore"), (25, "Wandelende encyclopedie", "Walking encyclopedia"))),
    ("festival", "festivals_attended", "🎪",
     ("Een festival bezocht: een ticket gescand aan de poort.",
      "{} festivals bezocht: tickets gescand aan de poort."),
     ("A festival attended: a ticket scanned at the gate.",
      "{} festivals attended: tickets scanned at the gate."),
     ((1, "Festivalganger", "Festival goer"), (3, "Seizoensvaste", "Season regular"),
      (10, "Veldveteraan", "Field veteran"), (25, "Festivalicoon", "Festival icon"))),
    ("reporter", "token_reports", "📝",
     ("Een muntprijs gemeld die geen uitschieter was.",
      "{} muntprijzen gemeld die geen uitschieter waren."),
     ("A token price reported that was not an outlier.",
      "{} token prices reported that were not outliers."),
     ((1, "Tipgever", "Tipster"), (5, "Prijsspeurder", "Price scout"),
      (15, "Muntenteller", "Token counter"), (40, "Marktmeester", "Market watcher"))),
)


def downgrade() -> None:
    with op.batch_alter_table('token_reports', schema=None) as batch_op:
        batch_op.drop_index('ix_token_reports_person')
        batch_op.drop_index('ix_token_reports_event_order')

    op.drop_table('token_reports')
    op.drop_table('festival_figures')
    with op.batch_alter_table('earned_badges', schema=None) as batch_op:
        batch_op.drop_index('ix_earned_badges_person_order')

    op.drop_table('earned_badges')
    op.drop_table('badges')
