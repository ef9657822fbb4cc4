package dashboard

// TargetCount is how many screens the presenter's o list offers.
func TargetCount() int { return len(targets()) }
