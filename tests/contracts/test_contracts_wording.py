"""One sentence, two forms (`contracts.wording`): plain with names in quotes, or HTML with
everything escaped and each name in its own <bdi>; a stored sentence whose facts no longer
say it is printed whole, escaped and isolated.

The names are a bakery's: batch ids and oven names someone typed."""

from __future__ import annotations

from contracts.wording import HTML, PLAIN, isolated, said_again

OVERRIDE = "\u202e"
BATCH = f"B{OVERRIDE}<i>7</i>"
TEMPLATE = "Batch {batch} leaves {oven} at {time}."


def say(words, batch=BATCH, oven="{oven}"):
    return words.say(TEMPLATE, batch=words.name(batch), oven=words.name(oven), time="06:00")


def test_plain_quotes_names_and_escapes_nothing():
    assert say(PLAIN) == f"Batch 'B{OVERRIDE}<i>7</i>' leaves '{{oven}}' at 06:00."


def test_html_escapes_and_isolates_each_name_and_leaves_our_words_alone():
    assert say(HTML) == (
        f"Batch '<bdi>B{OVERRIDE}&lt;i&gt;7&lt;/i&gt;</bdi>' leaves '<bdi>{{oven}}</bdi>' at 06:00."
    )


def test_lists_of_names_read_the_same_in_both_forms():
    names = ["rye", "spelt", "oat<"]
    assert PLAIN.names(names) == "'rye', 'spelt' and 'oat<'"
    assert HTML.names(names) == "'<bdi>rye</bdi>', '<bdi>spelt</bdi>' and '<bdi>oat&lt;</bdi>'"
    assert PLAIN.names([]) == HTML.names([]) == "nothing"


def test_a_stored_sentence_is_said_again_in_html_only_when_its_facts_say_it():
    stored = say(PLAIN)
    assert said_again(stored, say) == say(HTML)
    older = "Batch B7 left the oven."  # words of an older release
    assert said_again(older, say) == isolated(older) == "<bdi>Batch B7 left the oven.</bdi>"
    broken = said_again(f"<{BATCH}>", lambda words: words.say("{x}", x=[][0]))
    assert broken == f"<bdi>&lt;B{OVERRIDE}&lt;i&gt;7&lt;/i&gt;&gt;</bdi>"
