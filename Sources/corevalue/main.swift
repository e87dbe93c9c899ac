// placeholder
print("corevalue")
