print("vtrecord")
