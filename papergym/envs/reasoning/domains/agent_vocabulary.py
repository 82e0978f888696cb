"""The words and values the agent domain's requests are made of (kept apart from its logic)."""

from __future__ import annotations

CITIES = (
    "Paris", "London", "Tokyo", "New York", "Berlin", "Madrid", "Rome", "Toronto", "Sydney", "Mumbai",
    "Cairo", "Seoul", "Mexico City", "Lisbon", "Amsterdam", "Nairobi", "Buenos Aires", "Istanbul",
    "Bangkok", "Oslo", "Vienna", "Dublin", "Singapore", "Chicago", "Lima", "Hanoi", "Prague", "Cape Town",
)  # fmt: skip
AIRPORTS = (
    ("Paris", "CDG"), ("London", "LHR"), ("New York", "JFK"), ("Tokyo", "HND"), ("Frankfurt", "FRA"),
    ("Madrid", "MAD"), ("Rome", "FCO"), ("Dubai", "DXB"), ("Singapore", "SIN"), ("Toronto", "YYZ"),
    ("Sydney", "SYD"), ("Amsterdam", "AMS"), ("Istanbul", "IST"), ("Chicago", "ORD"), ("Seoul", "ICN"),
)  # fmt: skip
CURRENCIES = (
    ("USD", "US dollars"), ("EUR", "euros"), ("GBP", "British pounds"), ("JPY", "Japanese yen"),
    ("CHF", "Swiss francs"), ("CAD", "Canadian dollars"), ("AUD", "Australian dollars"),
    ("INR", "Indian rupees"), ("MXN", "Mexican pesos"), ("SEK", "Swedish kronor"),
)  # fmt: skip
STOCKS = (
    ("AAPL", "Apple"), ("MSFT", "Microsoft"), ("GOOGL", "Alphabet"), ("AMZN", "Amazon"), ("NVDA", "Nvidia"),
    ("TSLA", "Tesla"), ("META", "Meta"), ("NFLX", "Netflix"), ("INTC", "Intel"), ("KO", "Coca-Cola"),
)  # fmt: skip
UNIT_PAIRS = (  # (unit, unit, its name, its name): the conversions convert_units is asked for
    ("km", "mi", "kilometres", "miles"), ("m", "ft", "metres", "feet"), ("kg", "lb", "kilograms", "pounds"),
    ("l", "gal", "litres", "US gallons"), ("c", "f", "degrees Celsius", "degrees Fahrenheit"),
)  # fmt: skip
PEOPLE = ("ana", "ben", "chen", "dara", "eli", "fatima", "gus", "hana", "ivan", "kofi", "lena", "omar")
SUBJECTS = ("Budget review", "Team offsite", "Project update", "Lunch on Friday", "Contract draft",
             "Holiday plans")  # fmt: skip
BODIES = (
    "Please send me the Q3 numbers.", "Running ten minutes late.", "The slides are attached.",
    "Can we move our call to tomorrow?", "Thanks for your help today!", "The venue is confirmed.",
)  # fmt: skip
TASKS = (
    "call the dentist", "pay the rent", "water the plants", "renew my passport", "buy a birthday gift",
    "submit the expense report", "pick up the dry cleaning", "back up my laptop",
)  # fmt: skip
TITLES = (
    "Team standup", "Dentist appointment", "Lunch with Sam", "Quarterly review", "Yoga class",
    "Project kickoff", "Parent-teacher meeting", "Interview with a candidate",
)  # fmt: skip
QUERIES = (
    "hiking trails near Denver", "how to repot a cactus", "electric car tax credits", "sourdough recipe",
    "history of the Eiffel Tower", "python asyncio tutorial", "marathon training plan", "budget laptops",
)  # fmt: skip
TOPICS = ("climate summit", "chip industry", "local elections", "space exploration", "football transfers",
           "inflation", "renewable energy", "AI regulation")  # fmt: skip
PHRASES = ("Where is the train station?", "Thank you for your help.", "The meeting is postponed.",
            "I would like a coffee.", "Good morning, everyone.", "How much does this cost?")  # fmt: skip
RESTAURANTS = ("Le Petit Bistro", "Sakura Sushi", "Trattoria Roma", "The Green Table", "Casa Lola",
                "Golden Dragon", "Blue Fin Grill", "Maison Blanche")  # fmt: skip
PLACES = ("the airport", "Central Station", "the city museum", "123 Main Street", "the convention center",
           "Union Square", "the university campus", "the Grand Hotel")  # fmt: skip
LABELS = ("pasta", "laundry", "tea", "oven", "meditation", "pizza")
LANGUAGES = {"en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian",
              "ja": "Japanese"}  # fmt: skip
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve")  # fmt: skip
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")  # fmt: skip
