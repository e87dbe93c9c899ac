// placeholder
print("bench")
