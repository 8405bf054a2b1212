module keyhold/gotemplate

go 1.19
