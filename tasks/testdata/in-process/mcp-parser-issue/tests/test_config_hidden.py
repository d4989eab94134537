import unittest

import config


class HiddenConfigTest(unittest.TestCase):
    def test_value_with_equals(self):
        text = "url = postgres://shop@db/shop?sslmode=require&connect_timeout=5\n"
        self.assertEqual(config.parse(text), {"url": "postgres://shop@db/shop?sslmode=require&connect_timeout=5"})

    def test_key_ends_at_first_equals(self):
        self.assertEqual(config.parse("token = abc==\n"), {"token": "abc=="})
        self.assertEqual(config.parse("a==b\n"), {"a": "=b"})
        self.assertEqual(config.parse("  k   =   v = w  \n"), {"k": "v = w"})

    def test_empty_value(self):
        self.assertEqual(config.parse("note =\n"), {"note": ""})

    def test_deploy_file(self):
        settings = config.load("deploy.conf")
        self.assertEqual(settings["db.url"], "postgres://shop@db.internal/shop?sslmode=require&connect_timeout=5")
        self.assertEqual(settings["health.check"], "curl -fsS http://localhost:8080/health?verbose=1")
        self.assertEqual(settings["replicas"], "2")

    def test_unchanged_behaviour(self):
        text = "# c\n; c = 1\n[ db ]\nhost = h\n\nport = 1\n"
        self.assertEqual(config.parse(text), {"db.host": "h", "db.port": "1"})
        for bad in ["just words\n", "= value\n"]:
            with self.assertRaises(config.ConfigError):
                config.parse(bad)


if __name__ == "__main__":
    unittest.main()
