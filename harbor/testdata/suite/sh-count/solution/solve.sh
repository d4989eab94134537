#!/bin/sh
echo 'wc -l < /app/data.txt | tr -d " "' > /app/count.sh
