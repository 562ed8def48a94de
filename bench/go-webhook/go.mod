module topoguard/bench/go-webhook

go 1.19
