import unittest

import recipe


class RecipeTest(unittest.TestCase):
    def setUp(self):
        with open("pancakes.txt", encoding="utf-8") as f:
            self.text = f.read()

    def test_title(self):
        self.assertEqual(recipe.title(self.text), "Pancakes")

    def test_serves(self):
        self.assertEqual(recipe.serves(self.text), 4)

    def test_ingredient_count(self):
        self.assertEqual(len(recipe.ingredients(self.text)), 4)

    def test_steps(self):
        self.assertEqual(recipe.steps(self.text)[0], "Whisk the eggs and the milk.")


if __name__ == "__main__":
    unittest.main()
