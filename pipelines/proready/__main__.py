from pipelines.proready.build import main

main()
