import subprocess
out = subprocess.run(["python3", "/app/fizzbuzz.py"], capture_output=True, text=True).stdout.split()
want = ["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i) for i in range(1, 16)]
assert out == want, out
