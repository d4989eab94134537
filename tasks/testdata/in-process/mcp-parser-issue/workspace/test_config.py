import unittest

import config


class ConfigTest(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(config.parse("name = web\nport = 8080\n"), {"name": "web", "port": "8080"})

    def test_sections_and_comments(self):
        text = "# deploy settings\n[db]\nhost = localhost\n; old: port = 5432\nport = 6543\n"
        self.assertEqual(config.parse(text), {"db.host": "localhost", "db.port": "6543"})

    def test_bad_line(self):
        with self.assertRaises(config.ConfigError):
            config.parse("just words\n")


if __name__ == "__main__":
    unittest.main()
