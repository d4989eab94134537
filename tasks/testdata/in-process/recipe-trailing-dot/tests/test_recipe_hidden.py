import unittest

import recipe

OTHER = """Title: Porridge
Serves: 2

Ingredients:
- 1.5 l milk.
- 100 g oats.   
- butter
- 1 tsp. cinnamon.

Steps:
1. Bring the milk to a simmer.
2. Add the oats; stir for 5 min.
"""


class HiddenRecipeTest(unittest.TestCase):
    def setUp(self):
        with open("pancakes.txt", encoding="utf-8") as f:
            self.pancakes = f.read()

    def test_pancake_ingredients(self):
        self.assertEqual(
            recipe.ingredients(self.pancakes),
            ["200 g flour", "2 eggs", "300 ml milk", "1 pinch of salt"],
        )

    def test_decimals_spaces_and_items_without_dot(self):
        self.assertEqual(
            recipe.ingredients(OTHER),
            ["1.5 l milk", "100 g oats", "butter", "1 tsp. cinnamon"],
        )

    def test_steps_keep_punctuation(self):
        self.assertEqual(
            recipe.steps(self.pancakes),
            [
                "Whisk the eggs and the milk.",
                "Stir in the flour and the salt.",
                "Fry a ladleful at a time, 1 min per side.",
            ],
        )
        self.assertEqual(
            recipe.steps(OTHER),
            ["Bring the milk to a simmer.", "Add the oats; stir for 5 min."],
        )

    def test_parse(self):
        got = recipe.parse(OTHER)
        self.assertEqual(got["title"], "Porridge")
        self.assertEqual(got["serves"], 2)
        self.assertEqual(got["ingredients"][0], "1.5 l milk")
        self.assertEqual(len(got["steps"]), 2)


if __name__ == "__main__":
    unittest.main()
