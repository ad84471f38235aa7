from pipelines.proactivebench.build import main

main()
