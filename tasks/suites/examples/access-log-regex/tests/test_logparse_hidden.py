import unittest

import logparse


class HiddenLogparseTest(unittest.TestCase):
    def test_ipv4_unchanged(self):
        rec = logparse.parse_line(
            '10.0.0.5 - alice [10/Mar/2025:13:55:40 +0000] "POST /api/login HTTP/1.1" 302 512'
        )
        self.assertEqual(rec, {
            "client": "10.0.0.5", "user": "alice", "time": "10/Mar/2025:13:55:40 +0000",
            "method": "POST", "path": "/api/login", "protocol": "HTTP/1.1",
            "status": 302, "size": 512,
        })

    def test_ipv6(self):
        rec = logparse.parse_line(
            '2001:db8::7 - - [10/Mar/2025:13:56:01 +0000] "GET /feed.xml HTTP/1.1" 200 8120'
        )
        self.assertIsNotNone(rec)
        self.assertEqual(rec["client"], "2001:db8::7")
        self.assertEqual(rec["size"], 8120)
        rec = logparse.parse_line(
            '::1 - - [10/Mar/2025:14:00:00 +0000] "HEAD / HTTP/1.1" 200 0'
        )
        self.assertIsNotNone(rec)
        self.assertEqual(rec["client"], "::1")

    def test_http2(self):
        rec = logparse.parse_line(
            '10.0.0.5 - alice [10/Mar/2025:13:56:12 +0000] "GET /dashboard HTTP/2.0" 200 15230'
        )
        self.assertIsNotNone(rec)
        self.assertEqual(rec["protocol"], "HTTP/2.0")
        self.assertEqual(rec["path"], "/dashboard")

    def test_size_dash(self):
        rec = logparse.parse_line(
            '192.168.1.20 - - [10/Mar/2025:13:57:00 +0000] "GET /favicon.ico HTTP/1.1" 304 -'
        )
        self.assertIsNotNone(rec)
        self.assertEqual(rec["size"], 0)
        self.assertIs(type(rec["size"]), int)
        self.assertEqual(rec["status"], 304)

    def test_all_three(self):
        rec = logparse.parse_line(
            'fe80::1ff:fe23:4567:890a - bob [10/Mar/2025:13:58:30 +0000] "DELETE /api/items/42 HTTP/2.0" 204 -'
        )
        self.assertEqual(rec, {
            "client": "fe80::1ff:fe23:4567:890a", "user": "bob",
            "time": "10/Mar/2025:13:58:30 +0000", "method": "DELETE",
            "path": "/api/items/42", "protocol": "HTTP/2.0", "status": 204, "size": 0,
        })

    def test_garbage_still_none(self):
        for line in [
            "this line is not a log line",
            "",
            '10.0.0.5 - - [10/Mar/2025:13:55:40 +0000] "GET / HTTP/1.1" 200',
            '10.0.0.5 - - [10/Mar/2025:13:55:40 +0000] "GET / HTTP/1.1" abc 12',
            '10.0.0.5 - - [10/Mar/2025:13:55:40 +0000] "GET / HTTP/1.1" 200 12 extra',
            'not-an-address - - [10/Mar/2025:13:55:40 +0000] "GET / HTTP/1.1" 200 12',
            '10.0.0.5 - - [10/Mar/2025:13:55:40 +0000] "GET / FTP/1.1" 200 12',
        ]:
            self.assertIsNone(logparse.parse_line(line), line)

    def test_summary_of_access_log(self):
        with open("access.log", encoding="utf-8") as f:
            requests, total, statuses, skipped = logparse.summarize(f)
        self.assertEqual(requests, 7)
        self.assertEqual(total, 2326 + 512 + 8120 + 15230 + 153)
        self.assertEqual(dict(statuses), {200: 3, 302: 1, 304: 1, 204: 1, 404: 1})
        self.assertEqual(skipped, 1)


if __name__ == "__main__":
    unittest.main()
