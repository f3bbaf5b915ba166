"""Word lists the generator draws from (ASCII for identities, unicode for names and text)."""

from __future__ import annotations

FIRST_NAMES_ASCII: tuple[str, ...] = (
    "anna", "ben", "carla", "david", "elena", "felix", "grace", "hugo", "ines", "jonas",
    "karin", "liam", "maria", "noah", "olga", "paul", "quinn", "rosa", "sven", "tara",
    "umar", "vera", "wei", "xenia", "yusuf", "zoe", "aiko", "bruno", "chloe", "diego",
)  # fmt: skip
LAST_NAMES_ASCII: tuple[str, ...] = (
    "smith", "mueller", "garcia", "rossi", "dubois", "tanaka", "kim", "nowak", "silva",
    "jensen", "okafor", "patel", "cohen", "ivanova", "larsen", "moreau", "novak", "weber",
    "young", "zhang", "brown", "costa", "fischer", "haddad", "khan", "lopez", "meyer",
)  # fmt: skip
EMAIL_DOMAINS: tuple[str, ...] = (
    "example.com", "example.org", "example.net", "mail.example", "post.test", "corp.example",
)  # fmt: skip
UNICODE_EMAIL_LOCALS: tuple[str, ...] = ("zoë.müller", "josé.álvarez", "łukasz", "renée", "jürgen")

FIRST_NAMES: tuple[str, ...] = (
    "Anna", "Zoë", "José", "Łukasz", "Renée", "Jürgen", "Søren", "Ólafur", "Françoise",
    "Mārtiņš", "Ольга", "Дмитрий", "健", "さくら", "민준", "محمد", "Αλέξανδρος", "Nguyễn",
    "Chloé", "Björk", "Ayşe", "Ángel", "Małgorzata", "Priya", "李", "Oğuz", "Siân", "Zsófia",
)  # fmt: skip
LAST_NAMES: tuple[str, ...] = (
    "Müller", "Álvarez", "Żółć", "Dubois", "Ødegaard", "Smirnova", "Иванов", "渡辺", "山田",
    "김", "علي", "Παπαδόπουλος", "Văn An", "O'Brien", "García-López", "Nuñez", "Šimić",
    "Kowalczyk", "Ng", "Ó Súilleabháin", "Yılmaz", "Brontë", "Sørensen", "Wang", "Çelik",
)  # fmt: skip
NAME_DECORATIONS: tuple[str, ...] = ("", "", "", "", " 🌸", " (work)", ", PhD", " 🚀", " Jr.")

WORDS: tuple[str, ...] = (
    "alpha", "bravo", "delta", "echo", "gold", "silver", "north", "south", "blue", "green",
    "fast", "slow", "new", "returning", "vip", "trial", "basic", "premium", "café", "naïve",
    "straße", "über", "日本", "дом", "😀", "coöperate", "fiancée", "smörgåsbord",
)  # fmt: skip
CITIES: tuple[str, ...] = (
    "Berlin", "München", "Zürich", "São Paulo", "Kraków", "Reykjavík", "東京", "Москва",
    "New York", "Montréal", "Lisboa", "İstanbul", "Ciudad de México", "Αθήνα", "Dublin",
)  # fmt: skip
COUNTRIES: tuple[str, ...] = ("DE", "CH", "BR", "PL", "IS", "JP", "RU", "US", "CA", "PT", "TR")
LANGUAGES: tuple[str, ...] = ("de", "en", "fr", "pt-BR", "ja", "ru", "pl", "tr", "es", "el")

GROUP_KEYS: tuple[str, ...] = (
    "profile", "address", "preferences", "consent", "stats", "attributes", "device", "loyalty",
    "marketing", "billing", "shipping", "metrics", "context", "flags", "segments", "session",
)  # fmt: skip
