print("hello from nested")
