"""Word lists the extractive engine uses: abbreviations, stopwords and generic names.

They are data, not code: each list says what it is for. All entries are lower case.
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``."""
    return frozenset(text.split())


ABBREVIATIONS = words(
    """
    mr mrs ms messrs mme mlle dr st ste gen col lt capt cmdr adm maj sgt cpl gov sen rep reps hon
    jr sr prof rev fr pres supt atty esq gov't vs etc no nos vol vols art arts sec secs ch chap fig
    figs op cf al approx dept depts est inc ltd co corp bros ft mt jan feb mar apr jun jul aug sep
    sept oct nov dec assn ave blvd viz pp ed eds univ ibid ca cir govt natl min max sq mi
    """
)
"""Words that end with a period without ending the sentence ("Mr. Monroe", "Gen. Grant")."""

STOPWORDS = words(
    """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst an and another any anyhow anyone anything anyway anywhere are
    around as at be became because become becomes been before beforehand behind being below beside
    besides between beyond both but by can cannot could did do does doing done down during each
    either else elsewhere enough even ever every everyone everything everywhere except few for
    former formerly from further had has have having he hence her here hereafter hereby herein
    hers herself him himself his how however i if in indeed into is it its itself just last latter
    least less let like made make many may me meanwhile might mine more moreover most mostly much
    must my myself namely neither never nevertheless next no nobody none noone nor not nothing now
    nowhere of off often on once one only onto or other others otherwise our ours ourselves out
    over own per perhaps please put quite rather really same say says said see seem seemed seeming
    seems several shall she should since so some somehow someone something sometime sometimes
    somewhere still such than that the their theirs them themselves then thence there thereafter
    thereby therefore therein thereupon these they this those though through throughout thru thus
    to together too toward towards under until up upon us very via was we well were what whatever
    when whence whenever where whereafter whereas whereby wherein whereupon wherever whether which
    while whither who whoever whole whom whose why will with within without would yet you your
    yours yourself yourselves also ago upon shall unto thee thou thy hath doth tonight today
    let's we're we've we'll i'm i've i'll it's that's there's they're don't can't won't
    """
)
"""Function words: never a key phrase, and stripped from the edges of a capitalised run."""

GENERIC_NAMES = words(
    """
    congress government united states states nation nations america american americans president
    senate house representatives house of representatives constitution union federal government
    executive legislature people country world god i mr mrs ms sir madam speaker vice president
    chief justice fellow-citizens fellow citizens citizens gentlemen ladies members member
    administration republic cabinet state department secretary treasury army navy court courts
    committee commission legislation law laws act acts bill bills year years january february march
    april may june july august september october november december monday tuesday wednesday
    thursday friday saturday sunday today tonight applause laughter thank thanks amen chamber
    capitol earth nature heaven providence almighty lord christmas north south east west
    northern southern eastern western english french spanish german british european
    union national federal public first second third majesty highness excellency conference
    empire hemisphere dominion convention treaty republic kingdom territory territories city
    county island river church council party war peace african asian mexican cuban
    korean canadian puerto dominican jamaican chilean peruvian haitian christ bible scripture
    general message emperor empress king queen prince princess sovereign minister ministers
    """
)
"""Single words that name a capitalised generic ("Congress", "Government"): no topic page."""

GENERIC_PHRASES = frozenset(
    {
        "united states",
        "house of representatives",
        "federal government",
        "general government",
        "vice president",
        "chief justice",
        "fellow citizens",
        "fellow-citizens",
        "mr speaker",
        "madam speaker",
        "state of the union",
        "united states government",
        "government of the united states",
        "people of the united states",
        "congress of the united states",
        "president of the united states",
        "senate and house of representatives",
        "american people",
        "members of congress",
        "first lady",
        "god bless",
        "secretary of state",
        "secretary of the treasury",
        "secretary of war",
        "secretary of the navy",
        "secretary of the interior",
        "attorney general",
        "supreme court",
        "white house",
    }
)
"""Multi-word generic names: offices and bodies that would collect a page of everything."""

GENERIC_WORDS = words(
    """
    year years time times day days week weeks month months way ways part parts thing things
    people person persons men man women woman number numbers great good better best new old
    last next first second third present past future whole many much several other same own
    certain various large small high low full long short great greater greatest important
    necessary proper possible right general particular real able due recent early late further
    fiscal per cent percent total amount amounts sum lot kind sort place places point points
    matter matters case cases fact facts subject subjects result results effort efforts
    increase decrease end beginning means purpose purposes respect regard order question
    questions measure measures consideration attention interest interests view views
    condition conditions course hand hands side sides share today tonight ago every
    make made take taken give given let going get got come came dollar dollars cents
    million millions billion billions thousand thousands hundred hundreds
    """
)
"""Common words that make a lower-case phrase too vague for a topic ("last year", "great deal")."""

HONORIFICS = frozenset({"mr", "mrs", "ms", "dr", "sir", "madam", "messrs"})
"""Titles stripped from the front of a name when comparing names."""

CONNECTORS = frozenset(
    {"of", "de", "du", "del", "della", "la", "le", "von", "van", "der", "da", "di"}
)
"""Lower-case words that may join the capitalised words of one name ("Bank of England")."""

ANAPHORIC_STARTS = words(
    """
    it this that these those they them such he she his her its their there here
    but and or so yet thus hence therefore also moreover however nevertheless furthermore
    accordingly consequently meanwhile instead then finally further again besides indeed
    otherwise nonetheless likewise similarly still
    """
)
"""First words that make a sentence lean on the one before it: worth less out of context."""

SUBJECTLESS_STARTS = words("it its it's they their them this these those he she his her such both")
"""Pronouns and demonstratives that, opening a sentence, leave its subject in the sentence before
("It has a period of 2**19937-1."): such a claim cites that sentence too."""

BOILERPLATE = (
    "thank you",
    "god bless",
    "applause",
    "laughter",
    "good night",
    "good evening",
    "i am pleased",
    "i feel much satisfaction",
    "it gives me pleasure",
    "i have the honor",
    "congratulat",
)
"""Fragments of salutations and thanks: sentences with them are not facts."""

SALUTATION_WORDS = words(
    """
    senate representatives speaker members citizens fellow-citizens congress ladies gentlemen
    guests americans friends president madam mr vice countrymen
    """
)
"""Words of an address opening a speech ("Mr. Speaker, Members of the Congress:")."""

NUMBER_WORDS = words(
    """
    one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
    hundred thousand million billion trillion half dozen
    """
)
"""Numbers written out: never a name on their own."""

VERBS = words(
    """
    create creates make makes provide provides give gives take takes mean means require requires
    include includes remain remains become becomes allow allows help helps need needs seem seems
    show shows use uses say says go goes come comes get gets put puts keep keeps hold holds
    bring brings build builds lead leads set sets cut cuts pay pays send sends call calls
    ask asks want wants know knows think thinks feel feels see sees find finds work works
    contains occurs evaluates returns causes finishes exists succeeds begins refers appears
    support supports start starts print prints scan scans
    """
)
"""Common verbs: a lower-case phrase that starts or ends with one ("creates jobs", "query
contains") is not a topic."""

STEP_VERBS = words("return run open close insert delete update select drop overwrite print scan")
"""Verbs that open a step of instructions ("Return", "Run"): never a one-word name."""

DATE_WORDS = words(
    """
    mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec
    am pm utc gmt est pst
    """
)
"""Weekday and month abbreviations and time zones ("Date: Fri, 5 Nov 2021 10:00 +0100" in an
e-mail header a manual shows): never a name (full names are in :data:`GENERIC_NAMES`)."""

INTERFACE_WORDS = words(
    """
    edit edits save cancel delete open close undo redo copy paste insert view help tools window
    settings preferences search find replace select back next previous home menu ok apply submit
    add remove new empty none true false yes no note notes warning warnings tip tips caution
    important example examples see also default defaults boolean string strings integer integers
    number numbers value values list lists option options argument arguments parameter parameters
    file files line lines name names type types field fields entry entries item items element
    elements result results output input error errors message messages command commands flag
    flags setting variable variables key keys mode modes text character characters byte bytes
    format formats section sections page pages description synopsis usage overview summary
    introduction contents index table figure version versions step steps details detail
    following above below given same other current specified certain specific single multiple
    whole main usual normal simple full short long date time subject re fwd cc bcc
    """
)
"""Words of an interface or of any manual's furniture ("Edit", "Empty list", "Boolean value",
"Description"): a topic whose every word is one of these is no subject of its own."""

MODIFIERS = words(
    """
    single simple matched matching returned original suggested true false
    input output given specified different following previous various particular specific
    multiple additional extra actual entire separate individual resulting corresponding
    appropriate relevant typical usual normal
    """
)
"""Adjectives that open a phrase without naming a kind of thing ("single row", "returned
text", "input data"): a two-word key phrase that opens with one is no topic."""

PLACEHOLDER_NAMES = words("alice bob carol dave eve mallory trent foo bar baz qux quux")
MENU_VERBS = words("use print scan run")
"""Verbs that open a menu item or an instruction written in capitals ("Use Vim", "Run Git"):
a capitalised run that opens with one is no name."""
"""The names examples give their people and things ("Alice", "Bob", "foo"): no subject."""
